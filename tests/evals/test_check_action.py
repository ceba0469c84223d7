"""The action guard's eval set in CI: at least 30 paraphrased pairs, precision and recall of 0.9 or more."""

from agent.core.similarity import Similarity
from evals.check_action import evaluate, load_pairs
from memory.embedder import MiniLMEmbedder

MIN_PAIRS = 30
FLOOR = 0.9


def test_the_pair_set_is_large_and_names_real_records() -> None:
    pairs = load_pairs()
    assert len(pairs) >= MIN_PAIRS
    assert {p.verdict for p in pairs} == {"risky", "worked before", "no record"}
    assert all((p.record is None) == (p.verdict == "no record") for p in pairs)


def test_paraphrases_are_caught_and_unrelated_moves_are_not() -> None:
    report = evaluate(Similarity(MiniLMEmbedder()))
    print(
        f"check-action: {report.pairs} pairs ({report.positives} expecting a record), "
        f"precision {report.precision}, recall {report.recall}; misses {report.misses}"
    )
    assert report.precision >= FLOOR and report.recall >= FLOOR, report.misses
