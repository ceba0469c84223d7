"""The calibration fit and its reliability table, on data whose answer is known."""

from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from evals.bench.calibration import Pair, fit_logistic, held_out, isotonic, reliability


def test_the_logistic_fit_recovers_a_known_model() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 10))
    p = 1 / (1 + np.exp(-(0.5 + 2.0 * x[:, 0] - 1.0 * x[:, 1])))
    y = (rng.random(4000) < p).astype(float)
    fit = fit_logistic(x, y, l2=0.0)
    assert abs(fit.weights[0] - 2.0) < 0.25 and abs(fit.weights[1] + 1.0) < 0.2
    assert all(abs(w) < 0.15 for w in fit.weights[2:])


def test_reliability_bins_and_ece() -> None:
    report = reliability([0.05, 0.05, 0.95, 0.95], [False, False, True, False])
    assert [b["pairs"] for b in report["bins"]] == [2, 2]
    assert report["bins"][1]["observed"] == 0.5
    assert abs(report["ece"] - (0.5 * 0.05 + 0.5 * 0.45)) < 1e-9


def test_held_out_probabilities_come_from_fits_that_never_saw_the_query() -> None:
    rng = np.random.default_rng(5)
    pairs = [
        Pair(f"q{i % 40}", f"d{i}", "scoped", list(rng.normal(size=10)), bool(rng.random() < 0.3))
        for i in range(400)
    ]
    predicted = held_out(pairs)
    assert len(predicted) == 400 and all(0 < p < 1 for p in predicted)


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=300), st.integers(1, 40))
def test_the_isotonic_map_rises_claims_no_certainty_and_pools_small_blocks(
    pairs: list[tuple[float, bool]], min_block: int
) -> None:
    xs, ys = isotonic([x for x, _ in pairs], [y for _, y in pairs], min_block=min_block)
    assert len(xs) == len(ys) >= 1
    assert all(a < b for a, b in pairwise(ys))
    assert all(a <= b for a, b in pairwise(xs))
    assert all(0 < y < 1 for y in ys)
    assert len(ys) == 1 or len(pairs) >= min_block * len(ys)


def test_a_block_of_only_relevant_pairs_is_strong_evidence_not_certainty() -> None:
    _, ys = isotonic([i / 100 for i in range(100)], [i >= 70 for i in range(100)], min_block=25)
    assert ys[-1] == (30 + 1) / (30 + 2) and ys[0] == 1 / (70 + 2)
