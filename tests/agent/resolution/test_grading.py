"""The deterministic grader: 100 / 65 / 35 / 0 against the post-mortem, by record links and similarity."""

from typing import Any

from agent.core.similarity import Similarity
from agent.resolution.grading import PostMortem, grade
from memory.embedder import MiniLMEmbedder
from memory.schema import format_record
from tests.agent.fakes import record

WORDS = Similarity(None)
MEANING = Similarity(MiniLMEmbedder())
POOL = "connection pool sized for average load, so the sale burst queued requests"
CERT = "the load balancer certificate expired"


def _briefing(*causes: tuple[str, int], related: tuple[str, ...] = ()) -> dict[str, Any]:
    evidence = [{"n": 1, "kind": "alert", "text": "..."}]
    for n, ident in enumerate(("INC-0001", "INC-0002"), start=2):
        rec = record(ident, root_cause=POOL if ident == "INC-0002" else "retry storm against the processor")
        evidence.append({"n": n, "kind": "incident", "id": ident, "text": format_record(rec)})
    return {
        "likely_causes": [{"text": text, "citations": [n]} for text, n in causes],
        "related_incidents": [{"id": r} for r in related],
        "evidence": evidence,
    }


def _pm(root_cause: str, *named: str, recurrence_of: str | None = None) -> PostMortem:
    return PostMortem.of(fields=[root_cause, *named], root_cause=root_cause, recurrence_of=recurrence_of)


def test_top_cause_matching_the_root_cause_is_100() -> None:
    briefing = _briefing((f"Root cause recorded for INC-0002: {POOL}", 3))
    result = grade(
        briefing, _pm("Pool sized for average load; the burst queued requests for a connection"), WORDS
    )
    assert (result.score, result.matched) == (100, "INC-0002")


def test_the_same_failure_told_in_another_teams_words_is_the_recorded_root_cause() -> None:
    """Two engineers telling one failure share few words; its meaning is what they share."""
    told = "CoreDNS stayed at two replicas with a small CPU limit while the cluster tripled; name lookups "
    told += "fanned out and CoreDNS was throttled."
    recorded = "The new node image dropped the node-local DNS cache, so every lookup from the pods hit "
    recorded += "CoreDNS directly until it was throttled."
    result = grade(_briefing((f"Root cause recorded for INC-0002: {told}", 3)), _pm(recorded), MEANING)
    assert (result.score, result.reason) == (100, "the top likely cause is the recorded root cause")


def test_two_failures_told_in_the_same_words_are_not_the_recorded_root_cause() -> None:
    told = "The billing renewal job failed silently for weeks, so customer subscriptions lapsed."
    recorded = "The certificate renewal job failed silently for weeks, so the edge certificate expired."
    assert grade(_briefing((told, 3)), _pm(recorded), MEANING).score == 0


def test_a_typed_cause_is_graded_on_its_statement_never_its_shown_line() -> None:
    briefing = _briefing()
    briefing["likely_causes"] = [
        {"text": "Disputed: see INC-0002", "citations": [3], "role": "cause", "statement": POOL},
        {"text": f"shown line: {CERT}", "citations": [2], "role": "cause", "statement": "retry storm"},
    ]
    assert grade(briefing, _pm(POOL), WORDS).score == 100
    assert grade(briefing, _pm(CERT), WORDS).score == 0


def test_top_cause_citing_the_named_precedent_is_100() -> None:
    briefing = _briefing(("Root cause recorded for INC-0001: retry storm", 2))
    assert grade(briefing, _pm(CERT, "same failure as INC-0001"), WORDS).score == 100
    assert grade(briefing, _pm(CERT, recurrence_of="INC-0001"), WORDS).score == 100


def test_a_precedent_an_engineer_marked_the_same_failure_is_named_as_the_post_mortem_names_one() -> None:
    """The same failure told in another service's words: the cause test misses it, the mark does not."""
    briefing = _briefing(("Root cause recorded for INC-0001: retry storm", 2), related=("INC-0001",))
    marked = PostMortem.of(fields=[CERT], root_cause=CERT, recurrence_of=None, marked=["INC-0001"])
    assert grade(briefing, _pm(CERT), WORDS).score == 0
    result = grade(briefing, marked, WORDS)
    assert (result.score, result.matched) == (100, "INC-0001")
    assert "an engineer marked the same failure" in result.reason
    related_only = _briefing(("Root cause recorded for INC-0002: something else", 3), related=("INC-0001",))
    assert grade(related_only, marked, WORDS).score == 35
    abstained = grade(_abstaining(), marked, WORDS)
    assert abstained.abstained and "wrongly" in abstained.reason and abstained.matched == "INC-0001"


def test_a_precedent_both_named_and_marked_is_the_one_the_post_mortem_names() -> None:
    both = PostMortem.of(
        fields=["same failure as INC-0001"], root_cause=CERT, recurrence_of=None, marked=["INC-0001"]
    )
    assert both.named == {"INC-0001"} and not both.marked
    result = grade(_briefing(("Root cause recorded for INC-0001: retry storm", 2)), both, WORDS)
    assert "the post-mortem names" in result.reason


def test_a_later_cause_is_65() -> None:
    briefing = _briefing(
        ("Root cause recorded for INC-0001: retry storm", 2),
        (f"Uncertain (moderate match): Root cause recorded for INC-0002: {POOL}", 3),
    )
    result = grade(briefing, _pm(POOL), WORDS)
    assert result.score == 65 and "#2" in result.reason


def test_only_a_related_incident_right_is_35() -> None:
    briefing = _briefing(
        ("Root cause recorded for INC-0001: retry storm", 2), related=("INC-0001", "INC-0002")
    )
    assert grade(briefing, _pm(POOL), WORDS).score == 35


def test_wrong_or_nothing_is_0() -> None:
    assert grade(_briefing(("Root cause recorded for INC-0001: retry storm", 2)), _pm(CERT), WORDS).score == 0
    nothing = grade(_briefing(), _pm(CERT), WORDS)
    assert nothing.score == 0 and "no likely cause" in nothing.reason


def _abstaining(*causes: tuple[str, int]) -> dict[str, Any]:
    briefing = _briefing(*causes)
    briefing["summary"] = (
        "No reliable precedent: nothing in memory clears the match threshold for this alert."
    )
    return briefing


def test_no_reliable_precedent_is_graded_as_an_abstention_not_on_its_candidates() -> None:
    briefing = _abstaining((f"Uncertain (weak match): Root cause recorded for INC-0002: {POOL}", 3))
    result = grade(briefing, _pm(POOL), WORDS)
    assert (result.score, result.abstained) == (0, True)
    assert "wrongly" in result.reason and result.matched == "INC-0002"


def test_an_abstention_is_right_when_nothing_recalled_had_the_root_cause() -> None:
    result = grade(_abstaining(("Root cause recorded for INC-0001: retry storm", 2)), _pm(CERT), WORDS)
    assert (result.score, result.abstained, result.matched) == (0, True, None)
    assert "rightly" in result.reason


def test_an_abstention_is_wrong_when_the_post_mortem_names_a_precedent() -> None:
    result = grade(_abstaining(), _pm(CERT, "same failure as INC-0001"), WORDS)
    assert result.abstained and "wrongly" in result.reason and result.matched == "INC-0001"
