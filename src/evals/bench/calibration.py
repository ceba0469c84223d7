"""``recallops bench calibration``: is a precedent with confidence 0.7 relevant seven times in ten?

Labelled pairs come from two sources, and the fit and the figures use both:

- **the dev split** of the public post-mortem corpus, through the retrieval benchmark's protocol: every
  record imported as history, every scored query recalled with the agent's tool (scoped to its service
  and across all services, ten results each, from the bank as a briefing finds it, without the
  query's own record: ``evals.bench.without_own``, and ranked as a briefing ranks it, past the
  lookalikes the query contradicts: ``agent.core.tools.recall_past_lookalikes``); a pair is relevant
  when the judgments grade it 2, which requires an overlapping service. The shipped fit was made on
  pairs collected with that record in the bank, every rank after it one place worse; refitted on
  these, measured and not kept (docs/evals.md, "The query's own record");
- **the project's scenarios** (``evals.bench.scenario_pairs``): each alert posted and recalled the same
  way over its scenario's history; a pair is relevant when the scenario expects that record.

The dev split says how often a match is right on other people's post-mortems; the scenarios say what
a clear precedent (and a clear distractor) looks like, which the dev judgments alone never show. The
features are ``agent.core.confidence.features``, exactly what a briefing computes.

The model is a logistic regression fitted here with numpy (Newton steps, a small L2 penalty, inputs
standardised), with a second intercept and weight per input that apply to the dev split's pairs alone
(``fit_sources``: the shipped fit is the rest, what both sources agree on), then an isotonic map
(pool-adjacent-violators, blocks of at least 25 pairs) fitted on the logistic's out-of-fold outputs, so
there is nothing to install and the fit is a few dozen numbers. It is judged on held-out folds of
queries (every pair of a query, or of a group of scenarios expecting the same precedent, in the same
fold, so nothing is scored by a fit that saw it; the isotonic map is nested inside the training folds;
each pair scored by its own source's fit): the reliability table bins the held-out
probabilities and compares each bin's mean prediction with how often its pairs were relevant; the
expected calibration error (ECE) is the pair-weighted mean gap, pooled and per source.
``--fit`` then fits on every pair and writes the team's weights to ``agent/core/confidence_fit.json``
with the ranking model they are valid for.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agent.core.confidence import CONTRADICTED, FEATURES, FIT_RESOURCE, Fit
from agent.core.confidence import features as confidence_features
from agent.core.evidence import incident_service
from agent.core.team_fit import penalised_newton, reliability
from agent.core.tools import recall_past_lookalikes
from evals.bench.corpus import corpus_id, load_corpus, load_qrels, stored_id
from evals.bench.enough import both_labels, enough_folds, enough_queries, judged_by
from evals.bench.ranking import Qrels, folds, judged
from evals.bench.retrieval import DEPTH, Query, corpus_bank, dev_queries
from evals.bench.without_own import WithoutOwn
from memory.bank import Recall

L2 = 1.0
FOLDS = 5
MIN_BLOCK = 25
# How much a scenario's pair weighs against a dev split pair in the fit. A scenario's label says "the
# same failure"; a dev judgment says "the same failure on an overlapping service", so on the dev split
# a record of another service is irrelevant by construction whatever it says (29 of 442 cross-service
# pairs relevant, none of the 21 that repeat four or more of the signature's words in order). Weighed
# evenly, that teaches the service-blind evidence that an error repeated on another service means
# little. The weight was chosen on held-out folds, both halves, and held when the public corpus got
# its own terms (``fit_sources``; docs/evals.md).
SCENARIO_WEIGHT = 4.0
# The source of the public corpus's pairs (the dev split): the one with its own terms in the fit.
PUBLIC = "dev"


@dataclass(frozen=True)
class Pair:
    """One recalled record for one query; ``query`` is the fold group (a dev query, or scenarios
    expecting the same precedent)."""

    query: str
    document: str
    scope: str
    features: list[float]
    relevant: bool
    source: str = PUBLIC


async def collect(bank: Recall, queries: list[Query], qrels: Qrels, *, depth: int = DEPTH) -> list[Pair]:
    """Every (query, recalled incident) pair of both scopes, ``depth`` deep, labelled by the judgments,
    in recall's order."""
    pairs: list[Pair] = []
    for scope, scoped in (("scoped", True), ("unscoped", False)):
        for query in queries:
            found = await recall_past_lookalikes(
                WithoutOwn(bank, stored_id(query.id)),
                query.description,
                query.description,
                query.service if scoped else None,
                depth,
            )
            grades = judged(qrels, query.id)
            for incident in found:
                same = incident_service(incident) == query.service
                values = confidence_features(incident, query.description, same_service=same)
                doc = corpus_id(incident.id)
                pairs.append(Pair(query.id, doc, scope, values, grades.get(doc, 0) >= 2))
    return pairs


def _penalised(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Penalised logistic regression by Newton's method on standardised inputs: their means and scales,
    and the weights (the intercept first, not shrunk)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    return mean, scale, penalised_newton(z, y, weight, np.zeros(z.shape[1]), penalty)


def _fit(mean: np.ndarray, scale: np.ndarray, weights: np.ndarray, intercept: float) -> Fit:
    return Fit(
        ranking_model="",
        features=FEATURES,
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        weights=tuple(float(v) for v in weights),
        intercept=float(intercept),
    )


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None, *, l2: float = L2) -> Fit:
    """Penalised logistic regression on standardised inputs, each pair weighted (evenly when ``weight``
    is None)."""
    mean, scale, w = _penalised(x, y, np.ones(len(y)) if weight is None else weight, l2)
    return _fit(mean, scale, w[1:], w[0])


def _arrays(pairs: list[Pair]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    weight = [SCENARIO_WEIGHT if p.source == "scenarios" else 1.0 for p in pairs]
    return (
        np.array([p.features for p in pairs], dtype=float),
        np.array([p.relevant for p in pairs], float),
        np.array(weight, dtype=float),
    )


@dataclass(frozen=True)
class SourceFits:
    """The fit a bank's records are scored with (``team``), and the same fit with the public corpus's
    own terms (``public``), which score only the public corpus's pairs."""

    team: Fit
    public: Fit

    def of(self, pair: Pair) -> Fit:
        return self.public if pair.source == PUBLIC else self.team

    def calibrated(
        self, iso_x: tuple[float, ...], iso_y: tuple[float, ...], ceiling: float, ranking_model: str
    ) -> "SourceFits":
        return SourceFits(
            *(
                replace(
                    f, ranking_model=ranking_model, iso_x=iso_x, iso_y=iso_y, contradicted_ceiling=ceiling
                )
                for f in (self.team, self.public)
            )
        )


def fit_sources(pairs: list[Pair], *, l2: float = L2) -> SourceFits:
    """The logistic fit, with a second intercept and a second weight per input for the public corpus's
    pairs when the pairs hold another source too.

    A public judgment says "the same failure on an overlapping service" about cloud status pages; a team
    labels its own records "the same failure" whatever their service. Shared weights would learn the
    corpus's verdict on other services' records (irrelevant by construction) and its status-page
    wording; its own terms take what sets it apart, so the weights every bank uses keep what both
    sources agree on, and the corpus still lends them its pairs (the penalty keeps its own
    terms small unless its pairs disagree)."""
    x, y, weight = _arrays(pairs)
    public = np.array([p.source == PUBLIC for p in pairs], dtype=float)[:, None]
    if public.min() == public.max():  # one source: nothing to set apart
        fit = fit_logistic(x, y, weight, l2=l2)
        return SourceFits(fit, fit)
    n = x.shape[1]
    mean, scale, w = _penalised(np.hstack([x, public, public * x]), y, weight, l2)
    intercept, shared, own_intercept, own = w[0], w[1 : n + 1], w[n + 1], w[n + 2 :]
    own_mean, own_scale = mean[n + 1 :], scale[n + 1 :]
    # Each source's terms folded into plain weights over the inputs (the shared means and scales):
    # the team's records have the public terms at 0, the public corpus's pairs at 1 and at their inputs.
    team = intercept - own_intercept * mean[n] / scale[n] - float(np.sum(own * own_mean / own_scale))
    corpus = (
        intercept
        + own_intercept * (1 - mean[n]) / scale[n]
        + float(np.sum(own * (mean[:n] - own_mean) / own_scale))
    )
    return SourceFits(
        _fit(mean[:n], scale[:n], shared, team),
        _fit(mean[:n], scale[:n], shared + own * scale[:n] / own_scale, corpus),
    )


def isotonic(
    x: Sequence[float], y: Sequence[bool], *, min_block: int = MIN_BLOCK
) -> tuple[list[float], list[float]]:
    """Pool-adjacent-violators: the non-decreasing step function of ``x`` closest to ``y``, as knots.

    Blocks smaller than ``min_block`` pairs are pooled with a neighbour, so a handful of pairs at an
    end cannot pin a probability of 0 or 1. Each knot is a block's mean ``x`` and its observed rate with
    one relevant and one irrelevant pair added (Laplace's rule): thirty relevant pairs out of thirty
    are 97 % evidence, not certainty, and a briefing that says "100 % likely relevant" claims more than
    any finite set of labels shows.
    """
    order = sorted(range(len(x)), key=lambda i: x[i])
    blocks: list[list[float]] = []  # [sum of y, count, sum of x]
    for i in order:
        blocks.append([float(y[i]), 1.0, float(x[i])])
        _pool(blocks, _observed, min_block)
    _pool(blocks, _observed, min_block, closing=True)
    # The added pairs move a small block's rate more than a large one's, so two blocks in order may
    # swap (no relevant pair in 25, one in 200): those are pooled too.
    smoothed: list[list[float]] = []
    for block in blocks:
        smoothed.append(block)
        _pool(smoothed, _laplace, 0)
    return [b[2] / b[1] for b in smoothed], [_laplace(b) for b in smoothed]


def contradicted_ceiling(pairs: Sequence[Pair]) -> float:
    """The share of the pairs the alert contradicts that were relevant, by Laplace's rule as the
    isotonic map's rates are (no relevant pair in 90 is about 1 %, not never); no ceiling when no pair
    was contradicted."""
    relevant = [p.relevant for p in pairs if p.features[CONTRADICTED]]
    return (sum(relevant) + 1) / (len(relevant) + 2) if relevant else 1.0


def _observed(block: list[float]) -> float:
    return block[0] / block[1]


def _laplace(block: list[float]) -> float:
    return (block[0] + 1) / (block[1] + 2)


def _pool(
    blocks: list[list[float]], rate: Callable[[list[float]], float], min_block: int, *, closing: bool = False
) -> None:
    """Merge the last blocks while they are out of order or one is under ``min_block`` pairs (the last
    one only when ``closing``: more pairs may still join it)."""
    while len(blocks) > 1 and (
        rate(blocks[-2]) >= rate(blocks[-1])
        or blocks[-2][1] < min_block
        or (closing and blocks[-1][1] < min_block)
    ):
        last = blocks.pop()
        blocks[-1] = [blocks[-1][j] + last[j] for j in range(3)]


def fit_calibrated(pairs: list[Pair], ranking_model: str = "", k: int = FOLDS) -> SourceFits:
    """The logistic fits on every pair, with the isotonic map fitted on their out-of-fold outputs (each
    pair scored by its own source's fit)."""
    fits = fit_sources(pairs)
    outputs = [0.0] * len(pairs)
    for fold in folds(sorted({p.query for p in pairs}), k):
        inside = set(fold)
        partial = fit_sources([p for p in pairs if p.query not in inside])
        for i, pair in enumerate(pairs):
            if pair.query in inside:
                outputs[i] = partial.of(pair).logistic(pair.features)
    knots_x, knots_y = isotonic(outputs, [p.relevant for p in pairs])
    return fits.calibrated(tuple(knots_x), tuple(knots_y), contradicted_ceiling(pairs), ranking_model)


def held_out(pairs: list[Pair], k: int = FOLDS) -> list[float]:
    """Each pair's probability from the calibrated fit on the other folds' queries (nested for the map),
    scored by its own source's fit."""
    predicted = [0.0] * len(pairs)
    for fold in folds(sorted({p.query for p in pairs}), k):
        inside = set(fold)
        fits = fit_calibrated([p for p in pairs if p.query not in inside], k=k - 1)
        for i, pair in enumerate(pairs):
            if pair.query in inside:
                predicted[i] = fits.of(pair).probability(pair.features)
    return predicted


async def dev_pairs(corpus_path: Path, qrels_path: Path) -> tuple[list[Pair], str]:
    """The labelled pairs of the dev split, and the ranking model that produced them; ``TooLittle``
    when it has no scored query, or its pairs are all relevant or none: the fit gives the public
    corpus terms of its own, and the figures a source of their own, which it would then not be."""
    corpus = load_corpus(corpus_path)
    qrels = load_qrels(qrels_path)
    queries = dev_queries(corpus, qrels)
    judged = judged_by(corpus_path, qrels_path)
    enough_queries(len(queries), 1, judged=judged, needs="the dev split needs")
    async with corpus_bank(corpus) as bank:
        pairs = await collect(bank, queries, qrels)
        model = bank.ranking_model
    both_labels(pairs, of=judged)
    return pairs, model


def calibrate(pairs: list[Pair], ranking_model: str, *, fit_out: Path | None = None) -> dict[str, Any]:
    """Held-out reliability and ECE, pooled and per source; with ``fit_out``, also the fit on every
    pair, written there. ``TooLittle`` when the pairs have fewer fold groups than folds."""
    enough_folds(pairs, FOLDS, of="the dev split and the scenarios", groups="fold groups")
    predicted = held_out(pairs)
    report = reliability(predicted, [p.relevant for p in pairs])
    report |= {"ranking_model": ranking_model, "relevant": sum(p.relevant for p in pairs), "folds": FOLDS}
    report["sources"] = {}
    for source in sorted({p.source for p in pairs}):
        members = [i for i, p in enumerate(pairs) if p.source == source]
        own = reliability([predicted[i] for i in members], [pairs[i].relevant for i in members])
        report["sources"][source] = {
            "pairs": own["pairs"],
            "relevant": sum(pairs[i].relevant for i in members),
            "groups": len({pairs[i].query for i in members}),
            "ece": own["ece"],
        }
    contradicted = [p for p in pairs if p.features[CONTRADICTED]]
    report["contradicted"] = {
        "pairs": len(contradicted),
        "relevant": sum(p.relevant for p in contradicted),
        "ceiling": contradicted_ceiling(contradicted),
    }
    if fit_out is not None:
        fit = fit_calibrated(pairs, ranking_model).team
        fit_out.write_text(
            json.dumps({"fit": fit.as_dict(), "held_out": report}, indent=2) + "\n", encoding="utf-8"
        )
        report["written"] = str(fit_out)
    return report


def default_fit_path() -> Path:
    """Where the package reads its fit from (the source tree in a development install)."""
    from agent.core import confidence

    return Path(confidence.__file__).parent / FIT_RESOURCE


def markdown_table(report: dict[str, Any]) -> str:
    lines = ["| predicted | pairs | mean predicted | observed relevant |", "|---|---|---|---|"]
    lines += [
        f"| {r['bin']} | {r['pairs']} | {r['predicted']:.3f} | {r['observed']:.3f} |" for r in report["bins"]
    ]
    sources = "; ".join(
        f"{name} {s['ece']:.4f} over {s['pairs']} pairs ({s['relevant']} relevant, {s['groups']} fold groups)"
        for name, s in report.get("sources", {}).items()
    )
    lines += [
        "",
        f"ECE {report['ece']:.4f} over {report['pairs']} held-out pairs ({report['relevant']} relevant), "
        f"{report['folds']} folds by query; ranking model {report['ranking_model']}.",
    ]
    if sources:
        lines.append(f"Per source: {sources}.")
    if contradicted := report.get("contradicted"):
        lines.append(
            f"Contradicted by the alert: {contradicted['pairs']} pairs, {contradicted['relevant']} relevant; "
            f"a contradicted record is held to {contradicted['ceiling']:.3f}."
        )
    return "\n".join(lines)
