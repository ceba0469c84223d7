"""``recallops bench rerank``: does the relevance model order recall's first candidates better than recall?

Every scored dev query is recalled with the agent's tool ``depth`` deep, within its service and across
every service (the calibration benchmark's pairs, ``evals.bench.calibration.collect``). Each pair gets
the probability of a fit trained on the other folds' queries (``calibration.held_out``), so no query
is re-ranked by a fit that saw it, and each query's candidates are put in that order, recall's order
breaking ties. Per scope: R@1, R@5 and MRR@10 of recall's order, of the re-ranked order and of BM25
alone, and the paired bootstrap of the re-ranked order against each, with the mean difference on
each half of the queries (a change is adopted only where both halves agree).
"""

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.bench.calibration import FOLDS, Pair, collect, held_out
from evals.bench.corpus import load_corpus, load_qrels
from evals.bench.enough import both_labels, enough_folds, enough_queries, judged_by
from evals.bench.protocol import paired_bootstrap, per_query
from evals.bench.ranking import Qrels, folds
from evals.bench.retrieval import corpus_bank, dev_queries, rankings_of

METRICS = ("recall@1", "recall@5", "mrr@10")
Rankings = dict[str, list[str]]  # query id -> document ids, best first


def orders(pairs: Sequence[Pair], probabilities: Sequence[float], scope: str) -> tuple[Rankings, Rankings]:
    """Recall's order and the re-ranked order of each query's candidates in ``scope``."""
    recalled: dict[str, list[tuple[str, float]]] = {}
    for pair, probability in zip(pairs, probabilities, strict=True):
        if pair.scope == scope:
            recalled.setdefault(pair.query, []).append((pair.document, probability))
    as_recalled = {q: [d for d, _ in found] for q, found in recalled.items()}
    reranked = {q: [d for d, _ in sorted(found, key=lambda f: -f[1])] for q, found in recalled.items()}
    return as_recalled, reranked


def compare(a: Rankings, b: Rankings, qrels: Qrels) -> dict[str, dict[str, Any]]:
    """``a`` minus ``b`` per metric: the bootstrap interval over the queries and each half's mean."""
    left, right = per_query(a, qrels), per_query(b, qrels)
    halves = folds(sorted(left), 2)
    return {
        metric: paired_bootstrap(
            {q: v[metric] for q, v in left.items()}, {q: v[metric] for q, v in right.items()}
        )
        | {
            "halves": [
                round(statistics.mean(left[q][metric] - right[q][metric] for q in h), 4) for h in halves
            ]
        }
        for metric in METRICS
    }


def _means(rankings: Rankings, qrels: Qrels) -> dict[str, float]:
    scores = per_query(rankings, qrels)
    return {m: round(statistics.mean(s[m] for s in scores.values()), 4) for m in METRICS}


async def run_rerank(corpus_path: Path, qrels_path: Path, *, depth: int) -> dict[str, Any]:
    """The report; ``TooLittle`` when there are fewer scored queries, or queries that recalled a
    record, than held-out folds, or the recalled pairs are all relevant or none."""
    corpus = load_corpus(corpus_path)
    qrels = load_qrels(qrels_path)
    queries = dev_queries(corpus, qrels)
    judged = judged_by(corpus_path, qrels_path)
    enough_queries(len(queries), FOLDS, judged=judged, needs=f"re-ranking on {FOLDS} held-out folds needs")
    async with corpus_bank(corpus) as bank:
        pairs = await collect(bank, queries, qrels, depth=depth)
        bm25 = await rankings_of(bank.with_channels("keyword"), queries, reranked=False)
    enough_folds(pairs, FOLDS, of=judged)
    both_labels(pairs, of=judged)
    probabilities = held_out(pairs)
    report: dict[str, Any] = {"depth": depth, "queries": len(queries), "scopes": {}}
    for scope in ("scoped", "unscoped"):
        as_recalled, reranked = orders(pairs, probabilities, scope)
        report["scopes"][scope] = {
            "recall_order": _means(as_recalled, qrels),
            "reranked": _means(reranked, qrels),
            "bm25": _means(bm25[scope], qrels),
            "reranked_minus_recall_order": compare(reranked, as_recalled, qrels),
            "reranked_minus_bm25": compare(reranked, bm25[scope], qrels),
        }
    return report


def markdown(report: Mapping[str, Any]) -> str:
    lines = [
        f"Re-ranking the first {report['depth']} candidates by held-out relevance, "
        f"{report['queries']} queries",
        "",
        "| scope | order | " + " | ".join(METRICS) + " |",
        "|---|---|" + "---|" * len(METRICS),
    ]
    for scope, row in report["scopes"].items():
        for name in ("recall_order", "reranked", "bm25"):
            lines.append(f"| {scope} | {name} | " + " | ".join(f"{row[name][m]:.3f}" for m in METRICS) + " |")
    lines += [
        "",
        "| scope | comparison | metric | diff | 95% interval | halves |",
        "|---|---|---|---|---|---|",
    ]
    for scope, row in report["scopes"].items():
        for name in ("reranked_minus_recall_order", "reranked_minus_bm25"):
            for metric, d in row[name].items():
                halves = " / ".join(f"{h:+.3f}" for h in d["halves"])
                interval = f"[{d['low']:+.3f}, {d['high']:+.3f}]"
                lines.append(f"| {scope} | {name} | {metric} | {d['diff']:+.3f} | {interval} | {halves} |")
    return "\n".join(lines)
