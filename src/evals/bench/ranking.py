"""Ranking metrics for the retrieval benchmark, as pure functions over ids and graded judgments.

Definitions (one place, so the report and the docs cannot disagree):

- ``recall@k``: share of queries with at least one grade-2 document in the top k. An on-call engineer
  needs the one incident that explains the alert, not all of them, so a hit counts.
- ``mrr@10``: mean reciprocal rank of the first grade-2 document within the top 10 (0 when absent).
- ``ndcg@10``: graded gain ``2**grade - 1`` with a ``log2(rank + 1)`` discount, normalised by the ideal
  ordering of every judged document for that query.
- ``empty@10``: share of queries with nothing relevant (no document of grade 1 or 2) in the top 10.

Only queries with at least one grade-2 document are scored; the query's own record is never judged.
"""

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Qrels = Mapping[str, Mapping[str, int]]  # query id -> document id -> grade
CUTOFFS = (1, 3, 5, 10)
STRONG = 2
FOLD_SEED = 20221


@dataclass(frozen=True)
class Scores:
    """Averages over the scored queries, keyed as the report prints them."""

    recall: dict[int, float]
    mrr10: float
    ndcg10: float
    empty10: float
    queries: int

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {f"recall@{k}": round(v, 4) for k, v in self.recall.items()}
        out.update(
            {
                "mrr@10": round(self.mrr10, 4),
                "ndcg@10": round(self.ndcg10, 4),
                "empty@10": round(self.empty10, 4),
                "queries": self.queries,
            }
        )
        return out


def judged(qrels: Qrels, query_id: str) -> dict[str, int]:
    """The judgments of one query without its own record."""
    return {doc: grade for doc, grade in qrels.get(query_id, {}).items() if doc != query_id and grade > 0}


def scored_queries(qrels: Qrels) -> list[str]:
    """Queries that have at least one grade-2 document besides themselves, in a stable order."""
    return sorted(q for q in qrels if any(g >= STRONG for g in judged(qrels, q).values()))


def hit_at(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> bool:
    return any(grades.get(doc, 0) >= STRONG for doc in ranking[:k])


def reciprocal_rank(ranking: Sequence[str], grades: Mapping[str, int], k: int = 10) -> float:
    for rank, doc in enumerate(ranking[:k], start=1):
        if grades.get(doc, 0) >= STRONG:
            return 1.0 / rank
    return 0.0


def ndcg(ranking: Sequence[str], grades: Mapping[str, int], k: int = 10) -> float:
    def dcg(gains: Sequence[int]) -> float:
        return float(sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains[:k])))

    ideal = dcg(sorted(grades.values(), reverse=True))
    if ideal == 0:
        return 0.0
    return dcg([grades.get(doc, 0) for doc in ranking]) / ideal


def nothing_relevant(ranking: Sequence[str], grades: Mapping[str, int], k: int = 10) -> bool:
    return not any(grades.get(doc, 0) > 0 for doc in ranking[:k])


def evaluate(rankings: Mapping[str, Sequence[str]], qrels: Qrels) -> Scores:
    """Average every metric over the scored queries; a query missing from ``rankings`` ranked nothing."""
    queries = scored_queries(qrels)
    n = len(queries) or 1
    recall = {k: 0.0 for k in CUTOFFS}
    mrr = ndcg_sum = empty = 0.0
    for query in queries:
        grades = judged(qrels, query)
        ranking = [doc for doc in rankings.get(query, ()) if doc != query]
        for k in CUTOFFS:
            recall[k] += hit_at(ranking, grades, k)
        mrr += reciprocal_rank(ranking, grades)
        ndcg_sum += ndcg(ranking, grades)
        empty += nothing_relevant(ranking, grades)
    return Scores(
        recall={k: v / n for k, v in recall.items()},
        mrr10=mrr / n,
        ndcg10=ndcg_sum / n,
        empty10=empty / n,
        queries=len(queries),
    )


def folds(query_ids: Sequence[str], k: int = 5) -> list[list[str]]:
    """``k`` disjoint folds of the queries, the same ones on every run (a fixed shuffle of sorted ids)."""
    ordered = sorted(query_ids)
    rng = random.Random(FOLD_SEED)
    rng.shuffle(ordered)
    return [sorted(ordered[i::k]) for i in range(k)]
