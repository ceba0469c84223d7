"""Precedent confidence: one calibrated probability per recalled incident, valid for one ranker."""

from datetime import UTC, datetime

import pytest

from agent.core.confidence import FEATURES, Fit, band, features, precedent_confidence, shipped_fit
from memory import IncidentRecord, RecalledIncident
from memory.embedder import MODEL_ID


def _incident(
    why: dict[str, int], *, signature: str = "FATAL: remaining connection slots are reserved"
) -> RecalledIncident:
    record = IncidentRecord(
        incident_id="INC-1",
        service="checkout-service",
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
        id="INC-1", text="", record=record, score=0.9, why=why, tags=[], metadata={}, timestamp=None
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
