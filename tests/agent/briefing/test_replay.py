"""Replay: memory off versus on, as a diff of what memory added and removed."""

from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.briefing.replay import replay
from agent.core.evidence import AlertInput
from tests.agent.fakes import FakeRecall


async def test_replay_shows_what_memory_added(recall: FakeRecall) -> None:
    alert = AlertInput(text="FATAL: remaining connection slots are reserved", service="checkout-service")
    result = await replay(Agent(model=EvidenceOnlyPlanner(), bank=recall), alert)
    diff = result.diff
    assert result.memory_off.memory == "off" and result.memory_on.memory == "on"
    assert (
        diff.changed and diff.related_incidents.added == ["INC-0001"] and diff.related_incidents.removed == []
    )
    assert diff.seen_before.off == "novel" and diff.seen_before.on == "recurring"
    assert any("connection pool sized for average load" in c for c in diff.likely_causes.added)
    assert all("[" not in item for item in diff.risky_actions.added)


async def test_replay_on_an_empty_bank_changes_nothing() -> None:
    alert = AlertInput(text="disk full", service="search-api")
    result = await replay(Agent(model=EvidenceOnlyPlanner(), bank=FakeRecall()), alert)
    assert not result.diff.changed
    assert result.diff.related_incidents.added == [] and result.diff.seen_before.on == "novel"
