"""With a model configured, the same scenarios run against it: here a scripted one over real HTTP."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.report import evaluate
from tests.support.scripted_llm import Reply, ScriptedLLM, answer, tool_call

ANSWER = {
    "summary": "This looks like PM-1001 [2].",
    "likely_causes": [{"text": "maximumPoolSize 20 was sized for average load [2]", "citations": [2]}],
    "first_checks": [{"text": "Check max_connections on PrimaryDb [2]", "citations": [2]}],
    "suggested_fix": [{"text": "Scale checkout from 6 to 18 pods [2]", "citations": [2]}],
    "risky_actions": [{"text": "Scaling checkout pods made it worse [2]", "citations": [2]}],
    "related_incidents": ["PM-1001"],
    "seen_before": "similar",
}


def _script(body: dict[str, Any]) -> Reply:
    """Recall once, then answer: the shape of a real model's run."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        return answer(ANSWER)
    return tool_call("recall_similar_incidents", {"alert_description": "checkout pool exhausted", "limit": 5})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    server = ScriptedLLM(fallback=_script).start()
    monkeypatch.setenv("GROQ_API_KEY", "scripted")
    monkeypatch.setenv("RECALLOPS_LLM_BASE_URL", server.url)
    try:
        yield server
    finally:
        server.stop()


async def test_llm_run_is_scored_and_checked_like_evidence_only(llm: ScriptedLLM) -> None:
    summary = await evaluate(DEFAULT_SCENARIOS, mode="llm", only=["checkout-pool-flash-sale"])
    assert summary["mode"] == "llm" and summary["total"] == 1
    scenario = summary["scenarios"][0]
    assert scenario["error"] is None
    assert scenario["related"] == ["PM-1001"]
    # "PrimaryDb" is in neither the record nor the alert: the checker catches the invented name (an
    # invented figure the product's guard removes first), and an unsupported claim fails the scenario
    # just as a leaked canary would.
    findings = summary["faithfulness"]["findings"]
    assert [(f["check"], f["detail"]) for f in findings] == [("supported", "primarydb")]
    assert not scenario["passed"]
    assert scenario["failures"] == [
        "unsupported claim in first_checks item 1: 'primarydb' is in none of its cited sources nor the alert"
    ]
    assert summary["faithfulness"]["rates"]["cited"] == 1.0
    # The recorded failed attempt offered as the fix is taken out by the guard and counted by role.
    assert summary["guard"]["removed_by_role"] == {"fix": 1}, summary["guard"]
    assert summary["guard"]["removed_by_reason"] == {"other role": 1}
    assert summary["roles"]["failed_attempt_fixes"] == []
    # Every claim the guard kept is the model's in the briefing; the emptied fix list was filled in.
    by_origin = summary["roles"]["by_origin"]
    assert by_origin["model"]["kept"] == summary["guard"]["kept"] > 0
    assert by_origin["evidence"]["kept"] > 0
    assert scenario["roles"]["by_origin"] == by_origin
    assert llm.requests, "the model was never called"
    assert json.dumps(llm.requests[0]).count("recall_similar_incidents") >= 1
