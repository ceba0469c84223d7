"""The retrieval metrics, pinned on hand-worked cases and general properties."""

import math

from hypothesis import given
from hypothesis import strategies as st

from evals.bench.ranking import evaluate, judged, ndcg, reciprocal_rank, scored_queries

QRELS = {
    "q1": {"q1": 2, "a": 2, "b": 1, "c": 0},
    "q2": {"d": 1},  # no grade-2 document: not scored
    "q3": {"e": 2},
}


def test_only_queries_with_a_strong_document_are_scored_and_self_is_ignored() -> None:
    assert scored_queries(QRELS) == ["q1", "q3"]
    assert judged(QRELS, "q1") == {"a": 2, "b": 1}
    assert scored_queries({"q": {"q": 2}}) == []


def test_hand_worked_figures() -> None:
    scores = evaluate({"q1": ["q1", "b", "x", "a"], "q3": []}, QRELS)
    # q1: own record dropped, so the ranking is b, x, a: the first strong hit is at rank 3.
    assert scores.recall == {1: 0.0, 3: 0.5, 5: 0.5, 10: 0.5}
    assert math.isclose(scores.mrr10, (1 / 3) / 2)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    actual = 1 / math.log2(2) + 3 / math.log2(4)
    assert math.isclose(scores.ndcg10, (actual / ideal) / 2)
    assert scores.empty10 == 0.5  # q3 ranked nothing
    assert scores.queries == 2


def test_perfect_ranking_scores_one() -> None:
    scores = evaluate({"q1": ["a", "b"], "q3": ["e"]}, QRELS)
    assert scores.recall[1] == 1.0
    assert scores.mrr10 == 1.0
    assert math.isclose(scores.ndcg10, 1.0)
    assert scores.empty10 == 0.0


def test_as_dict_keys() -> None:
    keys = set(evaluate({}, QRELS).as_dict())
    assert keys == {
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "mrr@10",
        "ndcg@10",
        "empty@10",
        "queries",
    }


docs = st.lists(st.sampled_from("abcdefghijkl"), unique=True, max_size=12)
grades = st.dictionaries(st.sampled_from("abcdefghijkl"), st.integers(0, 2), max_size=12)


@given(docs, grades)
def test_metrics_are_bounded_and_monotone_in_k(ranking: list[str], qrel: dict[str, int]) -> None:
    scores = evaluate({"q": ranking}, {"q": qrel})
    for value in (*scores.recall.values(), scores.mrr10, scores.ndcg10, scores.empty10):
        assert 0.0 <= value <= 1.0 + 1e-9
    assert scores.recall[1] <= scores.recall[3] <= scores.recall[5] <= scores.recall[10]
    assert scores.mrr10 <= scores.recall[10]


@given(grades)
def test_ideal_order_maximises_ndcg(qrel: dict[str, int]) -> None:
    ideal = sorted((d for d, g in qrel.items() if g > 0), key=lambda d: -qrel[d])
    best = ndcg(ideal, qrel)
    assert best in (0.0,) or math.isclose(best, 1.0)
    assert ndcg(list(reversed(ideal)), qrel) <= best + 1e-9


def test_reciprocal_rank_stops_at_ten() -> None:
    assert reciprocal_rank([*"abcdefghij", "z"], {"z": 2}) == 0.0
