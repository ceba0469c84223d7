"""The re-ranking benchmark: candidates put in the order of their held-out relevance, compared per query."""

from hypothesis import given
from hypothesis import strategies as st

from evals.bench.calibration import Pair
from evals.bench.rerank import compare, markdown, orders

QRELS = {"q1": {"d2": 2, "d9": 1}, "q2": {"d5": 2}}


def _pair(query: str, document: str, scope: str = "unscoped") -> Pair:
    return Pair(query, document, scope, [0.0], False)


def test_candidates_are_put_in_the_order_of_their_probability_and_ties_keep_recalls_order() -> None:
    pairs = [_pair("q1", "d1"), _pair("q1", "d2"), _pair("q1", "d3"), _pair("q1", "d4", "scoped")]
    recalled, reranked = orders(pairs, [0.2, 0.7, 0.2, 0.9], "unscoped")
    assert recalled == {"q1": ["d1", "d2", "d3"]}
    assert reranked == {"q1": ["d2", "d1", "d3"]}


def test_a_re_ranking_that_finds_the_precedent_first_wins_on_every_metric() -> None:
    better = {"q1": ["d2", "d1"], "q2": ["d5"]}
    worse = {"q1": ["d1", "d2"], "q2": ["d7", "d8", "d9", "d6", "d4", "d5"]}
    found = compare(better, worse, QRELS)
    assert found["recall@1"]["diff"] == 1.0 and found["recall@5"]["diff"] == 0.5
    assert 0 < found["mrr@10"]["diff"] < 1 and len(found["mrr@10"]["halves"]) == 2
    assert compare(worse, worse, QRELS)["mrr@10"]["diff"] == 0.0


@given(st.permutations(["d1", "d2", "d3", "d4"]), st.lists(st.floats(0, 1), min_size=4, max_size=4))
def test_re_ranking_only_reorders_what_recall_found(documents: list[str], probabilities: list[float]) -> None:
    pairs = [_pair("q1", d) for d in documents]
    recalled, reranked = orders(pairs, probabilities, "unscoped")
    assert sorted(reranked["q1"]) == sorted(recalled["q1"]) == sorted(documents)
    ranked = [probabilities[documents.index(d)] for d in reranked["q1"]]
    assert ranked == sorted(ranked, reverse=True)


def test_the_report_names_each_scope_order_and_comparison() -> None:
    row = {
        name: {"recall@1": 0.5, "recall@5": 0.75, "mrr@10": 0.6}
        for name in ("recall_order", "reranked", "bm25")
    } | {
        name: compare({"q1": ["d2"]}, {"q1": ["d1"]}, QRELS)
        for name in ("reranked_minus_recall_order", "reranked_minus_bm25")
    }
    text = markdown({"depth": 30, "queries": 2, "scopes": {"unscoped": row}})
    assert "first 30 candidates" in text and "| unscoped | reranked | 0.500 | 0.750 | 0.600 |" in text
    assert "| unscoped | reranked_minus_bm25 | recall@1 | +0.500 |" in text  # q2 ranked nothing either way
