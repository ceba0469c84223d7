"""A model's answer through the whole loop meets the claim guards: what the local-model trial saw.

Only ``Agent.brief`` and the briefing it returns are read, so these tests say what an engineer would
see: a recorded failed attempt is never offered as the fix, a record's fix is never a risky move, a
summary's invented history is not stored, real ids however joined are not called invented, and a
model that calls no tool is briefed from a recall of the alert all the same.
"""

from collections.abc import Callable

from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing
from agent.core.tools import RECALL
from tests.agent.fakes import WatchedRecall, record
from tests.agent.scripted import ScriptedModel, answer, tool_call

ALERT = AlertInput(
    text="checkout requests failing: FATAL: remaining connection slots are reserved",
    service="checkout-service",
    title="Postgres connection pool exhausted",
)
RECALL_ARGS = {"alert_description": ALERT.text, "service": "checkout-service", "limit": 3}
FAILED = record("INC-0001").failed_attempts
FIX = record("INC-0001").resolution_steps.splitlines()[1].lstrip("0123456789. ")
CAUSE = {"likely_causes": [{"text": "Pool sized for average load [2]"}], "seen_before": "recurring"}


async def _brief(make_agent: Callable[..., Agent], reply: dict[str, object]) -> Briefing:
    script = ScriptedModel(
        [tool_call(RECALL, RECALL_ARGS), answer({"summary": "Pool exhausted [2].", **reply})]
    )
    return await make_agent(script).brief(ALERT)


async def test_a_recorded_failed_attempt_offered_as_the_fix_is_not_in_the_briefing(
    make_agent: Callable[..., Agent],
) -> None:
    briefing = await _brief(make_agent, {**CAUSE, "suggested_fix": [{"text": f"{FAILED} [2]"}]})
    assert all(FAILED.lower() not in c.text.lower() for c in briefing.suggested_fix)


async def test_a_records_fix_cited_as_a_risky_move_is_not_in_the_briefing(
    make_agent: Callable[..., Agent],
) -> None:
    briefing = await _brief(make_agent, {**CAUSE, "risky_actions": [{"text": f"{FIX} [2]"}]})
    assert all(FIX.lower() not in c.text.lower() for c in briefing.risky_actions)


async def test_a_summarys_invented_history_is_not_stored(make_agent: Callable[..., Agent]) -> None:
    summary = "Likely noise, two incidents in the last 24 hours. Pool exhausted [2]."
    briefing = await _brief(make_agent, {**CAUSE, "summary": summary})
    assert "two incidents" not in briefing.summary and "Pool exhausted [2]." in briefing.summary


async def test_real_ids_joined_by_a_comma_are_not_called_invented(make_agent: Callable[..., Agent]) -> None:
    briefing = await _brief(make_agent, {**CAUSE, "related_incidents": ["INC-0001, INC-0001"]})
    assert not [w for w in briefing.warnings if "not in the evidence" in w]
    assert [r.id for r in briefing.related_incidents] == ["INC-0001"]


async def test_a_model_that_calls_no_tool_is_still_briefed_from_a_recall_of_the_alert(
    make_agent: Callable[..., Agent],
) -> None:
    invented = {"summary": "Likely noise, two incidents in the last 24 hours.", "seen_before": "recurring"}
    script = ScriptedModel([answer(invented), answer(invented), answer(invented)])
    briefing = await make_agent(script).brief(ALERT)
    call = briefing.hops[0].calls[0]
    assert call.tool == RECALL and ALERT.text in str(call.args)
    assert "INC-0001" in [e.id for e in briefing.evidence] and "two incidents" not in briefing.summary


async def test_a_model_that_answers_after_a_scoped_recall_is_briefed_from_the_look_across_services(
    make_agent: Callable[..., Agent], bank: WatchedRecall
) -> None:
    """What the local model did with a gateway alert whose precedent was the auth service's: it answered
    from the one scoped recall, which found nothing on the gateway, and the briefing said "novel"."""
    alert = AlertInput(
        text="a third of requests rejected with 401: JWT signature verification failed",
        service="api-gateway",
    )
    scoped = {"alert_description": alert.text, "service": "api-gateway", "limit": 3}
    script = ScriptedModel([tool_call(RECALL, scoped), answer({"summary": "Auth failing [1].", **CAUSE})])
    briefing = await make_agent(script).brief(alert)
    planned = await Agent(model=EvidenceOnlyPlanner(), bank=bank).brief(alert)
    assert [r.id for r in briefing.related_incidents] == [r.id for r in planned.related_incidents]
    assert "INC-0003" in [r.id for r in briefing.related_incidents]
    assert briefing.seen_before == planned.seen_before != "novel"
    assert len(script.requests) == 2  # the look across services costs no model call


async def test_the_recall_the_loop_makes_reads_as_deep_as_the_evidence_only_briefings(
    make_agent: Callable[..., Agent], bank: WatchedRecall
) -> None:
    """The demo history's pool alert: four pool incidents on checkout, and the loop's recall for the
    model asked for three, so the briefing listed fewer precedents than the evidence-only one."""
    for ident in ("INC-0004", "INC-0005", "INC-0006"):
        bank.add(record(ident))
    script = ScriptedModel([answer({"summary": "Pool exhausted [2].", **CAUSE})] * 2)
    briefing = await make_agent(script).brief(ALERT)
    planned = await Agent(model=EvidenceOnlyPlanner(), bank=bank).brief(ALERT)
    assert len(planned.related_incidents) > 3
    assert [r.id for r in briefing.related_incidents] == [r.id for r in planned.related_incidents]
