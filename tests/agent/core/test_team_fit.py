"""The team's confidence fit: the shipped fit is its prior, labels move it, a worse refit is not adopted."""

import math
import random
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from agent.core.confidence import FEATURES, MODERATE, RESOLUTION, confidence_of, shipped_fit
from agent.core.team_fit import (
    BAR_FLOOR,
    HOLDS,
    INFERRED_WEIGHT,
    Label,
    TeamFit,
    chance_ece,
    decide,
    listing_bar,
    refit,
    reliability,
)

BASE = shipped_fit()


def _features(rng: random.Random) -> tuple[float, ...]:
    """Inputs around the shipped fit's own data (its mean, spread by its scale), kept in [0, 1]."""
    return tuple(min(max(rng.gauss(m, s), 0.0), 1.0) for m, s in zip(BASE.mean, BASE.scale, strict=True))


def _labels(n: int, relevant: bool, *, weight: float = 1.0, seed: int = 3) -> list[Label]:
    rng = random.Random(seed)
    return [Label(_features(rng), relevant, weight, f"INC-{i:04d}") for i in range(n)]


PROBE = _features(random.Random(99))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_without_labels_it_is_the_shipped_fit() -> None:
    fit = refit([], BASE)
    assert abs(fit.probability(PROBE) - BASE.probability(PROBE)) < 1e-9


@given(st.lists(st.floats(0, 1), min_size=len(FEATURES), max_size=len(FEATURES)))
def test_the_neutral_refit_agrees_with_the_shipped_fit_everywhere(values: list[float]) -> None:
    p = BASE.probability(values)
    if 0.01 < p < 0.99:  # the shipped map's ends are read a little inside 0 and 1
        assert abs(refit([], BASE).probability(values) - p) < 1e-6


def test_five_labels_move_it_a_little_and_five_hundred_a_lot() -> None:
    # Compared on the log-odds the prior acts on: near 0 or 1 a probability hides how far the fit moved.
    shipped = _logit(BASE.probability(PROBE))
    few = _logit(refit(_labels(5, False), BASE).probability(PROBE))
    many = _logit(refit(_labels(500, False), BASE).probability(PROBE))
    assert many < few < shipped
    assert shipped - few < 0.5 * (shipped - many)


def test_an_inferred_label_weighs_less_than_an_engineers() -> None:
    marked = refit(_labels(40, False), BASE).probability(PROBE)
    inferred = refit(_labels(40, False, weight=INFERRED_WEIGHT), BASE).probability(PROBE)
    assert marked < inferred < BASE.probability(PROBE)


def test_a_fit_round_trips_through_its_stored_form() -> None:
    fit = replace(refit(_labels(30, True), BASE), bar=0.17, resolution=0.08)
    again = TeamFit.from_dict(fit.as_dict(), BASE)
    assert again == fit


def test_a_fit_stored_before_it_had_a_listing_bar_lists_from_the_shipped_one() -> None:
    stored = refit(_labels(30, True), BASE).as_dict()
    del stored["bar"], stored["resolution"]
    fit = TeamFit.from_dict(stored, BASE)
    assert (fit.bar, fit.resolution) == (MODERATE, RESOLUTION)


def test_a_fit_stored_before_its_upper_half_had_a_slope_scores_as_it_did() -> None:
    fit = refit(_labels(30, True), BASE)
    stored = {k: v for k, v in fit.as_dict().items() if k not in ("upper", "hold")}
    again = TeamFit.from_dict(stored, BASE)
    assert again.upper == 0.0
    assert again.probability(PROBE) == replace(fit, upper=0.0).probability(PROBE)


@given(
    st.lists(st.floats(0, 1), min_size=len(FEATURES), max_size=len(FEATURES)),
    st.floats(-3, 3),
)
def test_the_upper_slope_bends_only_what_the_shipped_fit_calls_likely(
    values: list[float], upper: float
) -> None:
    bent = replace(refit([], BASE), upper=upper)
    p = BASE.probability(values)
    if 0.01 < p <= 0.5:
        assert abs(bent.probability(values) - p) < 1e-6


def test_labels_that_refute_the_shipped_fits_top_bring_it_down_and_leave_its_low_end_near() -> None:
    rng = random.Random(2)
    likely = [1.0, 1.0, 1.0, 1.0, 0.2, 0.1, 0.2, 0.2, 0.1, 0.0, 0.0, 0.0, 1.0, 1.0][: len(FEATURES)]
    near = (tuple(min(max(v + rng.gauss(0, 0.05), 0.0), 1.0) for v in likely) for _ in range(400))
    top = [x for x in near if BASE.probability(x) > 0.6][:40]
    low = [x for x in (_features(rng) for _ in range(3000)) if BASE.probability(x) < 0.3][:200]
    labels = [Label(x, False, 1.0, f"T-{i}") for i, x in enumerate(top)]
    labels += [Label(x, rng.random() < BASE.probability(x), 1.0, f"L-{i}") for i, x in enumerate(low)]
    fit = refit(labels, BASE)
    fell = [_logit(BASE.probability(x)) - _logit(fit.probability(x)) for x in top]
    moved = [abs(_logit(fit.probability(x)) - _logit(BASE.probability(x))) for x in low]
    assert len(top) == 40 and fit.upper < 0
    assert max(fit.probability(x) for x in top) < 0.1
    assert sum(moved) / len(moved) < sum(fell) / len(fell) / 3


def test_labels_an_input_explains_free_the_weights_and_labels_the_shipped_fit_explains_hold_them() -> None:
    rng = random.Random(4)
    rows = [_features(rng) for _ in range(300)]
    service = FEATURES.index("same_service")
    by_input = [Label(x, x[service] < BASE.mean[service], 1.0, f"INC-{i:04d}") for i, x in enumerate(rows)]
    by_shipped = [
        Label(x, rng.random() < BASE.probability(x), 1.0, f"INC-{i:04d}") for i, x in enumerate(rows)
    ]
    assert decide(by_input, BASE, BASE).fit.hold == HOLDS[0]
    assert decide(by_shipped, BASE, BASE).fit.hold > HOLDS[0]


def test_a_refit_tells_probabilities_apart_no_finer_than_its_held_out_error() -> None:
    rng = random.Random(5)
    noisy = [Label(_features(rng), rng.random() < 0.5, 1.0, f"INC-{i:04d}") for i in range(20)]
    for labels in (noisy, _labels(60, False)):
        decision = decide(labels, BASE, BASE)
        assert decision.fit.resolution == max(RESOLUTION, decision.held_out_ece)
    assert decide(noisy, BASE, BASE).fit.resolution > RESOLUTION


def _scored(pairs: list[tuple[float, bool]]) -> tuple[list[float], list[Label]]:
    return [p for p, _ in pairs], [Label((), y, 1.0, f"INC-{i}") for i, (_, y) in enumerate(pairs)]


def test_where_the_right_precedents_sit_low_the_bar_comes_down_to_list_them() -> None:
    """A team whose relevant precedents get 0.15-0.25 and the rest 0.05: a bar of 0.30 lists none."""
    predicted, labels = _scored([(0.15 + 0.01 * i, True) for i in range(10)] + [(0.05, False)] * 40)
    assert listing_bar(predicted, labels) == 0.15


def test_the_bar_stays_where_listing_lower_would_add_more_wrong_than_right() -> None:
    predicted, labels = _scored([(0.4, True)] * 8 + [(0.2, False)] * 30 + [(0.2, True)] * 2)
    assert listing_bar(predicted, labels) == MODERATE


def test_the_bar_does_not_move_on_a_handful_of_relevant_labels() -> None:
    predicted, labels = _scored([(0.15, True)] * 4 + [(0.05, False)] * 40)
    assert listing_bar(predicted, labels) == MODERATE


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=60))
def test_the_bar_never_rises_over_the_shipped_one_nor_falls_under_its_floor(
    pairs: list[tuple[float, bool]],
) -> None:
    """A precedent more likely than one in three is always listed; one under one in ten never is."""
    assert BAR_FLOOR <= listing_bar(*_scored(pairs)) <= MODERATE


def test_a_team_fit_lists_a_precedent_from_its_own_bar() -> None:
    fit = replace(refit([], BASE), bar=0.2)
    values = next(
        v for v in (_features(random.Random(s)) for s in range(500)) if 0.2 < BASE.probability(v) < 0.29
    )
    assert not confidence_of(values, ranking_model=BASE.ranking_model).reliable
    assert confidence_of(values, ranking_model=BASE.ranking_model, fit=fit).reliable


def test_a_refit_is_adopted_when_the_labels_say_the_shipped_fit_is_off() -> None:
    decision = decide(_labels(60, False), BASE, BASE)
    assert decision.adopted and decision.held_out_loss < decision.current_loss


class Sure:
    """A fit in use that already says these precedents are not relevant."""

    ranking_model = BASE.ranking_model
    bar = MODERATE
    resolution = RESOLUTION

    def probability(self, values: object) -> float:
        return 0.01


def test_a_refit_worse_than_the_fit_in_use_is_not_adopted() -> None:
    decision = decide(_labels(60, False), BASE, Sure())
    assert decision.held_out_loss > decision.current_loss
    assert not decision.adopted


def test_contradictory_labels_leave_the_refit_undecided_not_wild() -> None:
    labels = _labels(60, False)
    both = [*labels, *[Label(label.features, True, 1.0, label.group) for label in labels]]
    fit = refit(both, BASE)
    assert all(abs(fit.probability(label.features) - 0.5) < 0.1 for label in labels)


def test_reliability_of_perfect_predictions_is_zero() -> None:
    assert reliability([0.0, 1.0, 1.0, 0.0], [False, True, True, False])["ece"] == 0.0
    assert reliability([0.9, 0.9], [False, False])["ece"] == 0.9


def test_a_calibrated_model_on_few_pairs_shows_an_ece_that_more_pairs_shrink() -> None:
    few, many = chance_ece([0.3] * 100), chance_ece([0.3] * 10_000)
    # One bin at 0.3 over n pairs: |Binomial(n, 0.3)/n - 0.3| has a median near 0.67 * sqrt(0.21 / n).
    assert 0.02 < few["median"] < 0.04
    assert many["median"] < 0.005
    assert few["p95"] > few["median"]


def test_certain_probabilities_have_no_chance_error() -> None:
    assert chance_ece([0.0, 1.0, 1.0, 0.0]) == {"median": 0.0, "p95": 0.0}
    assert chance_ece([]) == {"median": 0.0, "p95": 0.0}


@given(st.lists(st.floats(0, 1), min_size=1, max_size=200))
def test_the_chance_floor_is_an_ece_and_reads_the_same_twice(predicted: list[float]) -> None:
    floor = chance_ece(predicted)
    assert 0.0 <= floor["median"] <= floor["p95"] <= 1.0
    assert chance_ece(predicted) == floor


def test_outcomes_drawn_from_the_probabilities_score_within_the_floor_mostly() -> None:
    rng = random.Random(5)
    predicted = [rng.random() for _ in range(150)]
    floor = chance_ece(predicted)
    inside = 0
    for _ in range(200):
        outcomes = [rng.random() < p for p in predicted]
        inside += reliability(predicted, outcomes)["ece"] <= floor["p95"]
    assert inside >= 180  # 95 % expected
