"""The calibration fit and its reliability table, on data whose answer is known."""

import numpy as np

from evals.bench.calibration import Pair, fit_logistic, held_out, reliability


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
