"""A recalled runbook feeds the briefing's checks, mitigations and risky actions."""

from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.evidence import AlertInput
from tests.agent.fakes import Doc, FakeRecall
from tests.memory.test_runbooks import RUNBOOK


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
