"""Runbooks are read by their own labels; a recalled runbook feeds checks, mitigations and risky actions."""

from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.evidence import AlertInput
from agent.core.runbooks import sections, title
from tests.agent.fakes import Doc, FakeRecall

RUNBOOK = """RUNBOOK RB-db-pool — checkout-service
Title: Database connection pool exhaustion
When: HikariPool errors while CPU is low.
First checks:
1. Pool dashboard: active == max and pending climbing.
2. Postgres: compare pg_stat_activity with max_connections
   and the per-service budget.
Mitigations that worked:
- Raise the pool only after computing pods x pool size.
Risky actions:
- Scaling pods out without checking database limits (INC-0001)."""


def test_sections_follow_the_runbook_labels() -> None:
    found = sections(RUNBOOK)
    assert found["first checks"] == [
        "Pool dashboard: active == max and pending climbing.",
        "Postgres: compare pg_stat_activity with max_connections and the per-service budget.",
    ]
    assert found["mitigations that worked"] == ["Raise the pool only after computing pods x pool size."]
    assert found["when"] == ["HikariPool errors while CPU is low."]
    assert title(RUNBOOK) == "Database connection pool exhaustion"


async def test_a_recalled_runbook_feeds_the_evidence_only_briefing(recall: FakeRecall) -> None:
    recall.docs["RB-db-pool"] = Doc(
        "RB-db-pool",
        RUNBOOK,
        ["service:checkout-service", "kind:runbook"],
        {},
        recall.docs["INC-0001"].timestamp,
    )
    alert = AlertInput(
        text="FATAL: remaining connection slots are reserved; HikariPool", service="checkout-service"
    )
    briefing = await Agent(model=EvidenceOnlyPlanner(), bank=recall).brief(alert)
    [runbook] = [e for e in briefing.evidence if e.kind == "runbook"]
    assert any(c.text.startswith("RB-db-pool first check: Pool dashboard") for c in briefing.first_checks)
    assert any(f.text.startswith("RB-db-pool mitigation:") for f in briefing.suggested_fix)
    warned = [r for r in briefing.risky_actions if r.text.startswith("RB-db-pool warns")]
    assert warned and warned[0].citations == [runbook.n] and "(INC-0001)" in warned[0].text
    assert briefing.warnings == []
