"""Any OpenAI-compatible ``/v1`` endpoint, over real HTTP to a scripted server on loopback."""

from collections.abc import Iterator

import pytest

from agent.briefing.loop import Agent
from agent.briefing.planner import SCOPED_LIMIT
from agent.briefing.recall_first import LOOP_CALL, REPLACED_QUERY
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing
from agent.core.tools import RECALL
from agent.endpoint import EndpointChatModel
from agent.llm import open_model
from agent.settings import HOSTED_TIMEOUT_S, SELF_HOSTED_TIMEOUT_S, LLMSettings
from tests.agent.fakes import FakeRecall
from tests.support.scripted_llm import ScriptedLLM, answer, tool_call

ALERT = AlertInput(
    text="checkout 500s, FATAL: remaining connection slots are reserved", service="checkout-service"
)
LABEL = "The alert on checkout-service (untrusted, possibly stale)"
GOOD = {
    "summary": "Pool exhausted, as in INC-0001 [2].",
    "likely_causes": [{"text": "Pool sized for average load [2]"}],
    "related_incidents": ["INC-0001"],
    "seen_before": "recurring",
}


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def local(llm: ScriptedLLM, **overrides: object) -> LLMSettings:
    """A local server as a team would configure it: a ``/v1`` base URL, a model name, no key."""
    values: dict[str, object] = {"llm_base_url": f"{llm.url}/v1", "llm_model": "qwen2.5-coder"}
    values.update(overrides)
    return LLMSettings(**values)  # type: ignore[arg-type]


async def brief(settings: LLMSettings, recall: FakeRecall) -> Briefing:
    model = open_model(settings)
    assert isinstance(model, EndpointChatModel)
    try:
        return await Agent(model=model, bank=recall).brief(ALERT)
    finally:
        await model.aclose()


async def test_a_v1_base_url_is_posted_to_without_any_prefix(llm: ScriptedLLM, recall: FakeRecall) -> None:
    llm.replies = [tool_call(RECALL, {"alert_description": ALERT.text}), answer(GOOD)]
    briefing = await brief(local(llm), recall)
    assert briefing.mode == "llm" and briefing.warnings == []
    assert llm.paths == ["/v1/chat/completions"] * 2
    assert llm.requests[0]["model"] == "qwen2.5-coder"
    assert llm.requests[0]["tool_choice"] == {"type": "function", "function": {"name": RECALL}}
    assert llm.requests[1]["tool_choice"] == "auto"


async def test_a_timeout_is_not_sent_again_and_says_so(llm: ScriptedLLM, recall: FakeRecall) -> None:
    llm.delay_s = 3.0
    llm.replies = [answer(GOOD)]
    briefing = await brief(local(llm, llm_timeout_s=0.5, llm_max_retries=3), recall)
    assert len(llm.requests) == 1
    assert briefing.mode == "evidence-only"
    [warning] = [w for w in briefing.warnings if w.startswith("The LLM was unavailable")]
    assert "no answer within 0.5 s" in warning and "not sent again" in warning
    assert "assembled from the evidence only" in warning


async def test_a_schema_constrained_first_hop_is_a_recall_of_the_alert_not_the_label(
    llm: ScriptedLLM, recall: FakeRecall
) -> None:
    llm.replies = [answer({"name": RECALL, "arguments": {"alert_description": LABEL}}), answer(GOOD)]
    briefing = await brief(local(llm, llm_force_call="json_schema"), recall)
    first = llm.requests[0]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    schema = first["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["name"]["const"] == RECALL
    [call] = briefing.hops[0].calls
    assert call.tool == RECALL and call.args["alert_description"] == ALERT.description
    assert call.note == REPLACED_QUERY


async def test_a_call_written_as_text_is_made_by_the_loop(llm: ScriptedLLM, recall: FakeRecall) -> None:
    fenced = '```json\n{"name": "recall_similar_incidents", "arguments": {"alert_description": "x"}}\n```'
    llm.replies = [answer(fenced), answer(GOOD)]
    briefing = await brief(local(llm), recall)
    call = briefing.hops[0].calls[0]
    assert call.tool == RECALL and call.note == LOOP_CALL
    assert call.args == {
        "alert_description": ALERT.description,
        "service": ALERT.service,
        "limit": SCOPED_LIMIT,
    }
    assert briefing.mode == "llm" and [r.id for r in briefing.related_incidents][:1] == ["INC-0001"]


@pytest.mark.parametrize(
    ("base_url", "endpoint", "timeout_s"),
    [
        (None, "groq", HOSTED_TIMEOUT_S),
        ("https://gateway.example", "groq", HOSTED_TIMEOUT_S),
        ("https://api.openai.com/v1", "openai-compatible", SELF_HOSTED_TIMEOUT_S),
        ("http://127.0.0.1:11434/v1/", "openai-compatible", SELF_HOSTED_TIMEOUT_S),
    ],
)
def test_the_base_url_picks_the_client_and_the_timeout(
    base_url: str | None, endpoint: str, timeout_s: float
) -> None:
    settings = LLMSettings(llm_base_url=base_url, llm_api_key="k")
    assert settings.endpoint == endpoint and settings.timeout_s == timeout_s
    assert LLMSettings(llm_base_url=base_url, llm_timeout_s=7).timeout_s == 7


def test_an_endpoint_alone_turns_the_model_on_and_evidence_only_wins() -> None:
    assert LLMSettings(llm_base_url="http://127.0.0.1:8089/v1").uses_llm
    assert not LLMSettings(llm_base_url="http://127.0.0.1:8089/v1", llm_mode="evidence-only").uses_llm


async def test_loop_forcing_spares_the_model_the_first_call(llm: ScriptedLLM, recall: FakeRecall) -> None:
    llm.replies = [answer(GOOD)]
    briefing = await brief(local(llm, llm_force_call="loop"), recall)
    assert len(llm.requests) == 1 and briefing.mode == "llm"
    call = briefing.hops[0].calls[0]
    assert call.note == LOOP_CALL and call.args["alert_description"] == ALERT.description
    assert [m["role"] for m in llm.requests[0]["messages"]][-2:] == ["assistant", "tool"]


async def test_a_model_that_answers_from_the_alert_alone_is_briefed_from_memory_anyway(
    llm: ScriptedLLM, recall: FakeRecall
) -> None:
    """Finding 2 of the local-model trial: the model called no tool and invented history."""
    invented = {
        "summary": "Likely noise, two incidents in the last 24 hours.",
        "suggested_fix": [{"text": "The fix that worked before was to increase the timeout"}],
        "seen_before": "recurring",
    }
    llm.replies = [answer(invented), answer(invented)]
    briefing = await brief(local(llm), recall)
    call = briefing.hops[0].calls[0]
    assert call.tool == RECALL and call.note == LOOP_CALL
    assert call.args["alert_description"] == ALERT.description
    assert "two incidents" not in briefing.summary
    assert all("increase the timeout" not in c.text for c in briefing.suggested_fix)
    removed = {(r.role, r.reason) for r in briefing.claim_check.removed}
    assert {("summary", "uncited"), ("fix", "uncited")} <= removed
