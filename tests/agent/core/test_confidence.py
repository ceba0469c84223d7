"""Precedent confidence: one calibrated probability per recalled incident, valid for one ranker."""

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.confidence import (
    FEATURES,
    MODERATE,
    RESOLUTION,
    Fit,
    band,
    features,
    precedent_confidence,
    shipped_fit,
    tie_groups,
)
from agent.core.evidence import AlertInput, Evidence
from memory import IncidentRecord, RecalledIncident
from memory.embedder import MODEL_ID


def _incident(
    why: dict[str, int],
    *,
    signature: str = "FATAL: remaining connection slots are reserved",
    incident_id: str = "INC-1",
    service: str = "checkout-service",
) -> RecalledIncident:
    record = IncidentRecord(
        incident_id=incident_id,
        service=service,
        timestamp=datetime(2026, 3, 1, tzinfo=UTC),
        symptom="checkout requests time out",
        error_signature=signature,
        root_cause="the connection pool was too small for the sale traffic",
        resolution_steps="raise the pool size",
        runbook_used="",
        outcome="fixed",
        failed_attempts="",
        resolved_by="dana",
    )
    return RecalledIncident(
        id=incident_id, text="", record=record, score=0.9, why=why, tags=[], metadata={}, timestamp=None
    )


def test_the_shipped_fit_is_for_the_shipped_embedding_model() -> None:
    # Changing the embedding model without refitting (recallops bench calibration --fit) fails here.
    assert shipped_fit().ranking_model == f"embedded:{MODEL_ID}"


def test_features_come_in_the_fit_order_and_read_ranks_and_overlap() -> None:
    values = dict(
        zip(
            FEATURES,
            features(
                _incident({"keyword": 2, "semantic": 1}), "remaining connection slots", same_service=True
            ),
            strict=True,
        )
    )
    assert values["keyword_rr"] == 0.5 and values["semantic_rr"] == 1.0 and values["best_rr"] == 1.0
    assert values["both_top5"] == 1.0 and values["same_service"] == 1.0
    assert 0 < values["signature_repeated"] < 1


def test_a_better_ranked_repeated_precedent_is_more_likely_relevant() -> None:
    alert = "checkout: FATAL: remaining connection slots are reserved"
    high = precedent_confidence(_incident({"keyword": 1, "semantic": 1}), alert, same_service=True)
    low = precedent_confidence(
        _incident({"keyword": 40}, signature="disk full on /var"), "search latency high", same_service=False
    )
    assert 0.0 <= low.probability < high.probability <= 1.0
    assert high.band == band(high.probability)


def test_another_ranker_gets_a_number_marked_uncalibrated() -> None:
    incident = _incident({"keyword": 1})
    ours = precedent_confidence(incident, "x", same_service=True, ranking_model=shipped_fit().ranking_model)
    other = precedent_confidence(incident, "x", same_service=True, ranking_model="hindsight")
    unknown = precedent_confidence(incident, "x", same_service=True)
    assert ours.calibrated and not other.calibrated and not unknown.calibrated
    assert ours.probability == other.probability


def test_a_fit_over_other_features_is_refused() -> None:
    data = shipped_fit().as_dict() | {"features": ["keyword_rr"]}
    with pytest.raises(ValueError, match="features"):
        Fit.from_dict(data)


def test_a_lookalike_that_repeats_the_alert_word_for_word_stays_under_its_contradiction() -> None:
    # The nightly-import lookalike's own words, but the alert has connections waiting where it had none.
    signature = "CheckoutLatencyHigh: p99 above 2 s; no 5xx, hikaricp_connections_pending 0"
    lookalike = _incident({"keyword": 1, "semantic": 1}, signature=signature)
    agreeing = "checkout p99 above 2 s; no 5xx, hikaricp_connections_pending 0, connection pool"
    contradicting = "checkout p99 above 2 s; hikaricp_connections_pending 180, connection pool"
    fit = shipped_fit()
    told_apart = precedent_confidence(lookalike, contradicting, same_service=True)
    assert told_apart.probability <= round(fit.contradicted_ceiling, 3) < MODERATE  # as a briefing rounds it
    assert precedent_confidence(lookalike, agreeing, same_service=True).probability > fit.contradicted_ceiling


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=len(FEATURES), max_size=len(FEATURES)))
def test_the_ceiling_holds_only_what_the_alert_contradicts(values: list[float]) -> None:
    fit = shipped_fit()
    uncapped = Fit.from_dict(fit.as_dict() | {"contradicted_ceiling": 1.0})
    contradicted = FEATURES.index("contradicted")
    values[contradicted] = 1.0
    assert fit.probability(values) == min(uncapped.probability(values), fit.contradicted_ceiling)
    values[contradicted] = 0.0
    assert fit.probability(values) == uncapped.probability(values)


def test_the_ceiling_is_part_of_the_written_fit() -> None:
    fit = shipped_fit()
    assert Fit.from_dict(fit.as_dict()) == fit
    assert (
        Fit.from_dict(
            {k: v for k, v in fit.as_dict().items() if k != "contradicted_ceiling"}
        ).contradicted_ceiling
        == 1.0
    )


class _InOrder:
    """A scorer giving the probabilities it was made with, one per precedent, in the order they are seen."""

    ranking_model = "test"
    bar = MODERATE

    def __init__(self, *probabilities: float, resolution: float = RESOLUTION) -> None:
        self._left = list(probabilities)
        self.resolution = resolution

    def probability(self, values: Sequence[float]) -> float:
        return self._left.pop(0)


def test_precedents_a_hair_apart_keep_the_order_retrieval_gave() -> None:
    first, second = _incident({"keyword": 1}), _incident({"keyword": 2})
    second = RecalledIncident(**{**second.__dict__, "id": "INC-2"})
    alert = AlertInput(text="checkout pool timeout", service="checkout-service")
    evidence = Evidence(alert, fit=_InOrder(0.749, 0.752))
    evidence, _ = evidence.with_incidents([first, second])
    assert [m.incident.id for m in evidence.ranked()] == ["INC-1", "INC-2"]


def test_a_fit_that_cannot_tell_two_precedents_apart_keeps_retrievals_order() -> None:
    """Ten points apart is a difference for a fit calibrated to within five, not for one within twelve."""
    first, second = _incident({"keyword": 1}), _incident({"keyword": 2})
    second = RecalledIncident(**{**second.__dict__, "id": "INC-2"})
    alert = AlertInput(text="checkout pool timeout", service="checkout-service")
    orders = []
    for resolution in (RESOLUTION, 0.12):
        evidence, _ = Evidence(alert, fit=_InOrder(0.60, 0.70, resolution=resolution)).with_incidents(
            [first, second]
        )
        orders.append([m.incident.id for m in evidence.ranked()])
    assert orders == [["INC-2", "INC-1"], ["INC-1", "INC-2"]]


def test_a_precedent_that_clears_the_listing_bar_goes_ahead_of_a_closer_one_below_it() -> None:
    """A tie puts the alert's own service first, but not a record under the bar ahead of one over it."""
    own = _incident({"keyword": 1})
    other = _incident({"keyword": 2}, incident_id="PM-2", service="postgres-primary")
    alert = AlertInput(text="checkout writes failing", service="checkout-service")
    evidence, _ = Evidence(alert, fit=_InOrder(MODERATE - 0.03, MODERATE + 0.01)).with_incidents([own, other])
    assert [m.incident.id for m in evidence.ranked()] == ["PM-2", "INC-1"]


@given(st.lists(st.floats(0, 1), max_size=12), st.floats(0.1, MODERATE), st.floats(RESOLUTION, 0.3))
def test_a_tie_group_never_spans_more_than_the_resolution(
    probabilities: list[float], bar: float, resolution: float
) -> None:
    groups = tie_groups(probabilities, bar, resolution)
    for g in set(groups):
        members = [p for p, h in zip(probabilities, groups, strict=True) if h == g]
        assert max(members) - min(members) < resolution
        assert len({p >= bar for p in members}) == 1
    by_probability = sorted(zip(probabilities, groups, strict=True), key=lambda pg: -pg[0])
    assert [g for _, g in by_probability] == sorted(groups)
