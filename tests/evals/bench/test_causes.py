"""The grader's cause test measured on pairs: each incident against every record before it, against the
judgments, so a grader that never says "the same" is seen missing every same failure, not agreeing."""

from agent.core.evidence import AlertInput
from agent.core.similarity import Similarity
from agent.resolution.grading import PostMortem
from evals.bench.causes import auc, cause_pairs, markdown, measure
from evals.bench.replay import Incident

WORDS = Similarity(None)
POOL = "connection pool sized for average load, so the sale burst queued requests"


def _incident(ident: str, cause: str, judgments: dict[str, int] | None = None) -> Incident:
    return Incident(
        id=ident,
        alert=AlertInput(text=ident),
        judgments=judgments or {},
        truth=PostMortem(root_cause=cause, precedents=frozenset()),
    )


STREAM = [
    _incident("A", POOL),
    _incident("B", "expired TLS certificate on the edge proxy"),
    _incident("C", "", {"A": 2}),  # no recorded cause: nothing to compare
    _incident("D", "the pool was sized for average load and the sale burst queued requests", {"A": 2}),
    _incident("E", "the pool ran dry after a retry storm", {"A": 2, "B": 1}),
]


def test_every_incident_meets_each_record_before_it_that_has_a_cause() -> None:
    pairs = cause_pairs(STREAM)
    assert [(p.incident, p.earlier) for p in pairs] == [
        ("B", "A"),
        ("D", "A"),
        ("D", "B"),
        ("E", "A"),
        ("E", "B"),
        ("E", "D"),
    ]
    assert [p.same_failure for p in pairs] == [False, True, False, True, False, False]  # related is not
    assert {p.incident: p.half for p in pairs} == {"B": 0, "D": 1, "E": 1}


def test_a_grader_missing_a_same_failure_told_otherwise_loses_recall_not_agreement() -> None:
    report = measure(cause_pairs(STREAM), WORDS)
    assert (report["pairs"], report["same_failure"], report["said_same"]) == (6, 2, 1)
    assert report["precision"] == 1.0
    assert report["recall"] == 0.5  # E's "pool ran dry" is A's failure in other words
    assert report["agreement"] == 0.8333
    assert report["auc_cosine"] is None  # no embedder, no cosine
    assert [h["pairs"] for h in report["halves"]] == [1, 5]
    assert "| stream | 6 | 2 | 1 | 1.000 | 0.500 | 0.833 |" in markdown(report)


def test_auc_counts_ties_half_and_needs_both_kinds() -> None:
    assert auc([0.9, 0.5, 0.5, 0.1], [True, True, False, False]) == 0.875
    assert auc([0.9], [True]) is None
