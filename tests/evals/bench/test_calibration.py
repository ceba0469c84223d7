"""The calibration fit and its reliability table, on data whose answer is known."""

import json
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agent.core.confidence import FEATURES
from evals.bench.calibration import (
    PUBLIC,
    Pair,
    calibrate,
    contradicted_ceiling,
    fit_calibrated,
    fit_logistic,
    fit_sources,
    held_out,
    isotonic,
    markdown_table,
    reliability,
)


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
        Pair(f"q{i % 40}", f"d{i}", "scoped", list(rng.normal(size=len(FEATURES))), bool(rng.random() < 0.3))
        for i in range(400)
    ]
    predicted = held_out(pairs)
    assert len(predicted) == 400 and all(0 < p < 1 for p in predicted)


def _pair(n: int, *, contradicted: bool, relevant: bool) -> Pair:
    values = [0.5] * len(FEATURES)
    values[FEATURES.index("contradicted")] = 1.0 if contradicted else 0.0
    return Pair(f"q{n % 10}", f"d{n}", "scoped", values, relevant)


def test_a_contradicted_record_is_held_to_how_often_such_records_were_relevant() -> None:
    pairs = [_pair(n, contradicted=n < 48, relevant=n in (0, 60, 61, 62)) for n in range(100)]
    assert contradicted_ceiling(pairs) == (1 + 1) / (48 + 2)  # one relevant in 48, by Laplace's rule
    assert contradicted_ceiling(pairs[48:]) == 1.0  # no pair was contradicted: nothing to hold it to
    fit = fit_calibrated(pairs).team
    assert fit.contradicted_ceiling == contradicted_ceiling(pairs)
    assert fit.probability(pairs[0].features) <= fit.contradicted_ceiling


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


def _two_sources(rng: np.random.Generator, n: int = 3000) -> list[Pair]:
    """A team's pairs and a public corpus's: the same evidence means the same, but the corpus calls
    another service's record irrelevant whatever it says (its last input is "same service")."""
    pairs = []
    for i in range(n):
        public = i % 2 == 0
        evidence, same = rng.normal(), float(rng.random() < 0.5)
        logit = -1.0 + 2.0 * evidence + (3.0 * same - 2.0 if public else 0.0)
        relevant = bool(rng.random() < 1 / (1 + np.exp(-logit)))
        pairs.append(
            Pair(f"q{i % 60}", f"d{i}", "scoped", [evidence, same], relevant, PUBLIC if public else "team")
        )
    return pairs


def test_each_source_is_calibrated_in_the_mean_by_its_own_fit() -> None:
    pairs = _two_sources(np.random.default_rng(11))
    fits = fit_sources(pairs, l2=1e-6)
    for source in (PUBLIC, "team"):
        own = [p for p in pairs if p.source == source]
        predicted = np.mean([fits.of(p).logistic(p.features) for p in own])
        assert abs(predicted - np.mean([p.relevant for p in own])) < 1e-4


def test_the_team_fit_does_not_learn_the_public_corpus_verdict_on_other_services() -> None:
    pairs = _two_sources(np.random.default_rng(12))
    fits = fit_sources(pairs, l2=1e-6)
    x = np.array([p.features for p in pairs])
    pooled = fit_logistic(x, np.array([p.relevant for p in pairs], float), l2=0.0)
    same = 1  # standardised weights: per standard deviation of "same service"
    assert abs(fits.team.weights[same]) < 0.15  # the team's records: the service says nothing
    assert pooled.weights[same] > 0.5  # pooled, the corpus's construction leaks into every bank
    assert fits.public.weights[same] > 0.5
    assert abs(fits.team.weights[0] / fits.team.scale[0] - 2.0) < 0.3


def test_one_source_is_one_fit() -> None:
    pairs = [replace(p, source="team") for p in _two_sources(np.random.default_rng(13), 400)]
    fits = fit_sources(pairs)
    assert fits.team == fits.public
    x = np.array([p.features for p in pairs])
    assert fits.team == fit_logistic(x, np.array([p.relevant for p in pairs], float))


def test_the_report_says_how_many_contradicted_pairs_the_ceiling_was_read_from(tmp_path: Path) -> None:
    pairs = [_pair(n, contradicted=n < 48, relevant=n in (0, 60, 61, 62, 70, 71)) for n in range(100)]
    out = tmp_path / "fit.json"
    report = calibrate(pairs, "test-model", fit_out=out)
    assert report["contradicted"] == {"pairs": 48, "relevant": 1, "ceiling": 2 / 50}
    assert "48 pairs, 1 relevant; a contradicted record is held to 0.040" in markdown_table(report)
    assert json.loads(out.read_text())["fit"]["contradicted_ceiling"] == 2 / 50
