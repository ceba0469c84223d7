"""The replay's scoring: the stream's fifths, the BM25 threshold, the figures, the precedent order."""

from datetime import UTC, datetime

from agent.core.schema import Briefing, EvidenceItem, RelatedIncident
from evals.bench.replay import KeywordPick, Scored, figures, fit_threshold, ranked, windows


def _row(incident: str, *, earlier: bool, top1: bool, grade: int, abstained: bool) -> Scored:
    return Scored(incident, earlier, top1, top1, grade, abstained, ((0.8, top1),))


def test_the_stream_is_cut_into_five_consecutive_parts() -> None:
    parts = windows(list(range(12)))
    assert [len(p) for p in parts] == [3, 3, 2, 2, 2]
    assert [x for p in parts for x in p] == list(range(12))


def test_the_threshold_is_the_score_with_the_most_right_decisions() -> None:
    def pick(score: float, top: str) -> KeywordPick:
        return KeywordPick([top], score, "", "")

    picks = [
        (pick(9.0, "A"), {"A"}, True),  # relevant top result: stated is right
        (pick(7.0, "B"), {"A"}, True),  # wrong top result: either way wrong (something relevant existed)
        (pick(3.0, "C"), set(), False),  # nothing relevant: abstaining is right
        (pick(2.0, "D"), set(), False),
    ]
    assert fit_threshold(picks) == 7.0


def test_figures_separate_recall_grades_and_abstention() -> None:
    rows = [
        _row("a", earlier=True, top1=True, grade=100, abstained=False),
        _row("b", earlier=True, top1=False, grade=0, abstained=True),
        _row("c", earlier=False, top1=False, grade=0, abstained=True),
        _row("d", earlier=False, top1=False, grade=35, abstained=False),
    ]
    got = figures(rows)
    assert (got["recall@1"], got["mean_grade"]) == (0.5, 33.75)
    assert (got["mean_grade_relevant_in_memory"], got["mean_grade_none_in_memory"]) == (50.0, 17.5)
    assert (got["abstain_precision"], got["abstain_recall"]) == (0.5, 0.5)
    assert got["ece"] == 0.55 and got["cited_pairs"] == 4  # said 0.8 four times, right once
    assert got["ece_by_chance"]["p95"] < got["ece"]  # beyond what four calibrated pairs show by chance


def _briefing(summary: str, related: list[str]) -> Briefing:
    evidence = [
        EvidenceItem(n=2, kind="incident", id="A", title="A", text="", probability=0.2),
        EvidenceItem(n=3, kind="incident", id="B", title="B", text="", probability=0.4),
        EvidenceItem(n=4, kind="incident", id="C", title="C", text="", probability=0.6),
    ]
    return Briefing(
        summary=summary,
        related_incidents=[RelatedIncident(id=r, service="s", score=0.6, why="") for r in related],
        seen_before="similar",
        evidence=evidence,
        mode="evidence-only",
        memory="on",
        generated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_the_stated_precedent_comes_first_and_an_abstention_states_none() -> None:
    assert ranked(_briefing("Pool again.", ["A"])) == ("A", ["A", "C", "B"])
    assert ranked(_briefing("No reliable precedent: nothing clears.", [])) == (None, ["C", "B", "A"])
