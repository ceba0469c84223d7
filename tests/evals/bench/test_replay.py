"""The replay's stream and scoring: the corpus in time order, the stream's fifths, the BM25 threshold, the
figures, the precedent order, and the command's choice of stream."""

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from agent.core.confidence import FEATURES
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing, EvidenceItem, RelatedIncident
from agent.core.similarity import Similarity
from agent.resolution.grading import PostMortem
from evals.bench.replay import (
    Incident,
    KeywordPick,
    Scored,
    Segment,
    bootstrap,
    corpus_stream,
    figures,
    fit_threshold,
    grade_pick,
    markdown,
    missed,
    ranked,
    windows,
)
from web.cli import app


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
    assert got["ece"] == 0.55 and got["shown_pairs"] == 4  # said 0.8 four times, right once
    assert got["ece_by_chance"]["p95"] < got["ece"]  # beyond what four calibrated pairs show by chance
    assert missed(rows) == ["b"]  # "a" was found, "c" and "d" had nothing earlier to find


def test_abstention_is_undefined_not_zero_when_there_is_nothing_to_count() -> None:
    found = [_row("a", earlier=True, top1=True, grade=100, abstained=False)]
    got = figures(found)  # nothing abstained, and every incident had a precedent to find
    assert (got["abstain_precision"], got["abstain_recall"]) == (None, None)


def test_a_fifth_with_nothing_earlier_to_find_has_no_recall_and_no_interval() -> None:
    """A short stream's first fifth: no incident had an earlier relevant one, so recall is undefined,
    and learning against BM25 there has no incident to compare on, not a measured 0 [0, 0]."""
    early = [_row(i, earlier=False, top1=False, grade=0, abstained=True) for i in "abcde"]
    got = figures(early)
    assert (got["recall@1"], got["recall@5"], got["mean_grade_relevant_in_memory"]) == (None, None, None)
    assert got["mean_grade"] == 0.0
    results = {name: early for name in ("learning", "learning_inferred", "frozen", "bm25", "memory_off")}
    rows = bootstrap(results)
    recall = [r for r in rows if r["metric"] == "recall@1"]
    assert recall and all((r["diff"], r["low"], r["high"]) == (None, None, None) for r in recall)
    assert all(r["diff"] == 0.0 for r in rows if r["metric"] == "mean_grade")
    learned = {
        "labels": 0,
        "refits": 0,
        "adopted": 0,
        "listing_bar": 0.3,
        "tie_resolution": 0.05,
        "ece_after_first_fifth": None,
        "ece_after_first_fifth_by_chance": None,
        "shown_pairs_after_first_fifth": 0,
    }
    systems = {
        name: figures(early)
        | {"windows": [figures(w) for w in windows(early)], "halves": [figures(h) for h in windows(early, 2)]}
        | {"missed_first": []}
        | (learned if name.startswith("learning") else {})
        for name in results
    }
    grader = {
        "briefings": 0,
        "agreement": None,
        "graded_right_when_relevant": None,
        "graded_right_when_not": None,
    }
    text = markdown({"systems": systems, "bootstrap": rows[:3], "grader": grader, "seconds": 1.0})
    assert "- bm25: -/-/0.0" in text
    assert "Per half (recall@1 / recall@5 / mean grade):\n- learning: -/-/0.0  -/-/0.0" in text
    assert "| stream | learning - frozen | recall@1 | - | - |" in text
    assert "agrees on - of 0" in text


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


def test_an_abstentions_precedents_keep_the_briefings_own_order_within_a_tie() -> None:
    """A tie is ordered as the briefing orders it (same service first, then retrieval's order), so the
    first precedent scored is the closest record the abstention names, not the one a hair likelier."""
    other, same = (0.0,) * len(FEATURES), (0.0,) * (len(FEATURES) - 1) + (1.0,)
    briefing = _briefing("No reliable precedent: nothing clears.", []).model_copy(
        update={
            "evidence": [
                EvidenceItem(
                    n=2, kind="incident", id="A", title="A", text="", probability=0.29, features=other
                ),
                EvidenceItem(
                    n=3, kind="incident", id="B", title="B", text="", probability=0.26, features=same
                ),
                EvidenceItem(
                    n=4, kind="incident", id="C", title="C", text="", probability=0.27, features=same
                ),
                EvidenceItem(
                    n=5, kind="incident", id="D", title="D", text="", probability=0.10, features=same
                ),
            ]
        }
    )
    assert ranked(briefing) == (None, ["B", "C", "A", "D"])
    # a tie never spans the listing bar: over a team's lower bar, A is listed and the others are not
    assert ranked(briefing, bar=0.28) == (None, ["A", "B", "C", "D"])


def _corpus_record(rid: str, date: str) -> dict[str, object]:
    return {
        "id": rid,
        "date": date,
        "title": f"Outage {rid}",
        "services": ["Storage"],
        "manifestation": ["errors"],
        "impact_symptom": ["availability"],
        "summary": "Errors.",
        "root_cause": {"details": f"cause of {rid}"},
        "mitigation": {"details": "rolled back", "labels": ["rollback"]},
    }


def test_the_corpus_is_replayed_by_date_each_incident_leaving_its_own_record() -> None:
    corpus = [
        _corpus_record("P/2", "2021-03-01"),
        _corpus_record("P/1", "2020-01-05"),
        _corpus_record("P/3", "2021-02"),
    ]
    qrels = {"P:2": {"P:1": 2, "P:2": 2}}
    stream = corpus_stream(corpus, qrels)
    assert [i.id for i in stream] == ["P:1", "P:3", "P:2"]
    assert [i.row["incident_id"] if i.row else None for i in stream] == ["P:1", "P:3", "P:2"]
    assert stream[2].judgments == {"P:1": 2}  # never its own record
    assert stream[2].truth.root_cause == "cause of P/2"
    assert Segment(stream).incidents == stream


def test_replay_needs_a_corpus_or_the_scenarios_and_not_both(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "P/1", "date": "2020-05-01"}\n')
    qrels = tmp_path / "q.tsv"
    qrels.write_text("P/1\tP/2\t2\n")
    cases = {
        (): "nothing to replay: give --corpus and --qrels, or --scenarios",
        ("--corpus", str(corpus)): "--corpus alone is half a corpus",
        ("--qrels", str(qrels)): "--qrels alone is half a corpus",
        ("--scenarios", "--corpus", str(corpus), "--qrels", str(qrels)): "leave out --corpus and --qrels",
        ("--scenario-dir", str(tmp_path), "--corpus", str(corpus)): "leave out --corpus and --qrels",
        ("--scenario-dir", str(corpus)): "is a file",
    }
    for args, message in cases.items():
        result = CliRunner().invoke(app, ["bench", "replay", *args])
        assert result.exit_code == 2, args
        assert message in " ".join(result.output.split()), result.output
        assert "Traceback" not in result.output


def test_an_empty_bm25_pick_is_graded_as_an_abstention_whatever_the_threshold() -> None:
    truth = PostMortem(root_cause="pool exhausted", precedents=frozenset({"A"}))
    incident = Incident("q", AlertInput(text="pool timeout"), {"A": 2}, truth)
    sim = Similarity(None)
    assert grade_pick(KeywordPick([], 0.0, "", ""), incident, sim) == (0, 0)
    assert grade_pick(KeywordPick(["A"], 3.0, "other", "A"), incident, sim) == (100, 0)
