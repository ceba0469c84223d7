"""Scoring rules, on hand-made briefings: each expectation passes when met and names what is missing."""

from typing import Any

from evals.scenarios.scenario import Expect, TextExpectation
from evals.scenarios.scoring import Observation, flagged, memory_citations, plain, score

BRIEFING: dict[str, Any] = {
    "summary": "This alert resembles PM-1 [2].",
    "likely_causes": [{"text": "Pool sized for average load [2]", "citations": [2]}],
    "first_checks": [{"text": "Check max_connections", "citations": [2]}],
    "suggested_fix": [],
    "risky_actions": [{"text": "Scaling pods made it worse", "citations": [2]}],
    "related_incidents": [{"id": "PM-1", "service": "a"}, {"id": "PM-2", "service": "b"}],
    "seen_before": "similar",
    "evidence": [{"n": 1, "kind": "alert"}, {"n": 2, "kind": "incident", "id": "PM-1"}],
    "warnings": [],
}


def seen(briefing: dict[str, Any] = BRIEFING, **counts: int) -> Observation:
    return Observation(
        briefing=briefing,
        incidents=counts.get("incidents", 1),
        briefings=counts.get("briefings", 1),
        memory_writes=counts.get("memory_writes", 0),
    )


def test_met_expectations_give_no_failures() -> None:
    expect = Expect(
        top1="PM-1",
        in_top=["PM-2"],
        not_in_top=["PM-9"],
        seen_before="similar",
        text=[
            TextExpectation(section="likely_causes", contains=["POOL SIZED"], first=True),
            TextExpectation(section="risky_actions", contains=["scaling"], absent=["flushall"]),
        ],
    )
    assert score(expect, seen()) == []


def test_each_unmet_expectation_is_one_readable_line() -> None:
    expect = Expect(
        top_k=1,
        top1="PM-2",
        in_top=["PM-2"],
        not_in_top=["PM-1"],
        seen_before="recurring",
        flagged=True,
        text=[TextExpectation(section="suggested_fix", contains=["backoff"])],
    )
    failures = score(expect, seen(incidents=2, briefings=0, memory_writes=1))
    assert failures == [
        "top related incident is PM-1, expected PM-2",
        "PM-2 not in top 1 (PM-1)",
        "PM-1 in top 1 but must not be",
        "suggested_fix lacks 'backoff'",
        "seen_before is similar, expected recurring",
        "instruction-like input was not flagged",
        "2 incident(s) opened, expected 1",
        "0 briefing(s) stored, expected 1",
        "triage wrote 1 document(s) to memory",
    ]


def test_first_only_looks_at_the_first_item() -> None:
    briefing = {**BRIEFING, "likely_causes": [{"text": "old cause"}, {"text": "idle-in-transaction"}]}
    expect = Expect(text=[TextExpectation(section="likely_causes", contains=["idle-in"], first=True)])
    assert score(expect, seen(briefing)) == ["first item of likely_causes lacks 'idle-in'"]


def test_cold_start_needs_the_plain_statement_and_no_remembered_citation() -> None:
    expect = Expect(no_prior=True)
    failures = score(expect, seen())
    assert "summary does not say that no prior incident is known" in failures
    assert "cold start lists related incidents: PM-1, PM-2" in failures
    assert "cold start cites remembered records" in failures
    cold = {
        **BRIEFING,
        "summary": "No prior incident is known: memory is off. Work from the alert [1].",
        "likely_causes": [{"text": "From the alert", "citations": [1]}],
        "first_checks": [],
        "risky_actions": [],
        "related_incidents": [],
    }
    assert score(expect, seen(cold)) == []


def test_helpers() -> None:
    assert plain("Raise the pool [1]  to 60 ［2］") == "raise the pool to 60"
    assert memory_citations(BRIEFING) == [2, 2, 2]
    assert not flagged(BRIEFING)
    assert flagged({**BRIEFING, "warnings": ["Possible prompt injection in the alert [1]"]})
    assert flagged({**BRIEFING, "evidence": [{"n": 1, "kind": "alert", "flagged": True}]})
