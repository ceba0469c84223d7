"""The real groq SDK over real HTTP to a scripted OpenAI-compatible server on loopback."""

from collections.abc import Iterator

import pytest
from starlette.responses import JSONResponse

from agent.briefing.loop import Agent
from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.evidence import AlertInput
from agent.core.tools import RECALL
from agent.endpoint import EndpointChatModel
from agent.llm import STATUS, open_model
from tests.agent.conftest import llm_settings
from tests.agent.fakes import FakeRecall
from tests.support.net import free_port
from tests.support.scripted_llm import ScriptedLLM, answer, tool_call

ALERT = AlertInput(text="FATAL: remaining connection slots are reserved", service="checkout-service")


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


async def test_rate_limited_then_tool_call_then_answer_over_http(
    llm: ScriptedLLM, recall: FakeRecall
) -> None:
    llm.replies = [
        JSONResponse({"error": {"message": "rate limited"}}, status_code=429, headers={"retry-after": "0"}),
        tool_call(RECALL, {"alert_description": ALERT.text, "service": "checkout-service"}),
        answer(
            {
                "summary": "Pool exhausted, as in INC-0001 [2].",
                "likely_causes": [{"text": "Pool sized for average load 【2】"}],
                "risky_actions": [{"text": "Scaling replicas without checking max_connections [2]"}],
                "related_incidents": ["INC-0001"],
                "seen_before": "recurring",
            }
        ),
    ]
    model = EndpointChatModel(llm_settings(llm_base_url=llm.url, llm_model="openai/gpt-oss-120b"))
    try:
        briefing = await Agent(model=model, bank=recall).brief(ALERT)
    finally:
        await model.aclose()
    assert briefing.mode == "llm" and briefing.warnings == []
    assert briefing.likely_causes[0].text == "Pool sized for average load [2]"
    assert [r.id for r in briefing.related_incidents] == ["INC-0001"]
    assert len(llm.requests) == 3
    assert all(h["authorization"] == "Bearer test-key" for h in llm.headers)
    assert llm.requests[1]["model"] == "openai/gpt-oss-120b" and llm.requests[1]["tools"]
    assert llm.requests[2]["messages"][-1]["role"] == "tool"
    assert briefing.hops[1].usage is not None and briefing.hops[1].usage.prompt_tokens == 100


async def test_an_unreachable_llm_gives_evidence_only_with_a_warning(recall: FakeRecall) -> None:
    settings = llm_settings(llm_base_url=f"http://127.0.0.1:{free_port()}", llm_max_retries=1)
    model = open_model(settings)
    assert isinstance(model, EndpointChatModel)
    try:
        briefing = await Agent(model=model, bank=recall).brief(ALERT)
    finally:
        await model.aclose()
    assert briefing.mode == "evidence-only"
    assert any(w.startswith("The LLM was unavailable") for w in briefing.warnings)
    assert briefing.related_incidents[0].id == "INC-0001"
    assert not STATUS.ok and "could not be reached" in (STATUS.last_error or "")


def test_no_key_means_evidence_only() -> None:
    assert isinstance(open_model(llm_settings(llm_api_key=None)), EvidenceOnlyPlanner)
    assert isinstance(open_model(llm_settings(llm_mode="evidence-only")), EvidenceOnlyPlanner)
