"""The profile written by the LLM (real groq SDK, scripted model), checked against the records."""

import json
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from tenacity import wait_none

from agent.endpoint import EndpointChatModel
from agent.profile.synthesis import LLMProfileSynthesizer, checked, profile_synthesizer
from agent.settings import LLMSettings
from memory.patterns import OfflineSynthesizer
from memory.profile import SOURCE_QUERY
from tests.agent.conftest import llm_settings
from tests.agent.scripted import ScriptedModel, answer
from tests.memory.fakes import HashingEmbedder
from tests.memory.profile_records import HISTORY

Build = Callable[[ScriptedModel], LLMProfileSynthesizer]


@pytest.fixture
async def synthesizer() -> AsyncIterator[Build]:
    models: list[EndpointChatModel] = []

    def build(script: ScriptedModel) -> LLMProfileSynthesizer:
        client = httpx.AsyncClient(transport=script.transport())
        model = EndpointChatModel(llm_settings(llm_max_retries=0), http_client=client, backoff=wait_none())
        models.append(model)
        return LLMProfileSynthesizer(model, offline=OfflineSynthesizer())

    yield build
    for model in models:
        await model.aclose()


PROFILE = {
    "patterns": [
        {
            "title": "Database connection pool exhaustion under burst load",
            "incidents": ["INC-0001", "INC-0003", "INC-0999"],
            "uncertain": False,
            "services": [{"text": "checkout-service", "citations": ["INC-0001"]}],
            "risky_actions": [
                {"text": "Adding pods opens more connections", "citations": ["INC-0001", "INC-0999"]}
            ],
        },
        {"title": "Invented", "incidents": ["INC-0999"], "uncertain": False},
        {"title": "Key rotation gaps", "incidents": ["INC-0004"], "uncertain": False},
    ]
}


async def test_the_models_profile_keeps_only_what_the_records_support(synthesizer: Build) -> None:
    script = ScriptedModel([answer(f"Profile:\n{json.dumps(PROFILE)}")])
    result = await synthesizer(script).synthesize(query=SOURCE_QUERY, incidents=HISTORY)

    titles = [p["title"] for p in result.structured["patterns"]]
    assert titles == ["Database connection pool exhaustion under burst load", "Key rotation gaps"]
    pool, jwt = result.structured["patterns"]
    assert pool["incidents"] == ["INC-0001", "INC-0003"]
    assert pool["risky_actions"][0]["citations"] == ["INC-0001"]
    assert jwt["uncertain"] is True
    prompt = script.requests[0]["messages"]
    assert "untrusted" in prompt[0]["content"] and "INC-0005" in prompt[1]["content"]
    assert "tools" not in script.requests[0]


@pytest.mark.parametrize(
    "reply",
    [httpx.Response(503, json={"error": {"message": "overloaded"}}), answer("I cannot help with that.")],
)
async def test_an_unavailable_or_unusable_model_leaves_the_offline_profile(
    synthesizer: Build, reply: object
) -> None:
    result = await synthesizer(ScriptedModel([reply])).synthesize(query=SOURCE_QUERY, incidents=HISTORY)
    offline = OfflineSynthesizer().patterns(HISTORY)
    assert [p["incidents"] for p in result.structured["patterns"]] == [p.incidents for p in offline]
    assert "Written offline" in result.text


def test_checked_drops_unknown_citations() -> None:
    offline = OfflineSynthesizer().patterns(HISTORY)
    assert checked(offline, {"INC-0004"})[0].incidents == ["INC-0004"]
    assert checked(offline, set()) == []


@pytest.mark.parametrize(
    ("settings", "by_model"),
    [
        ({"llm_api_key": "gsk-test"}, True),
        ({"llm_base_url": "http://127.0.0.1:8089/v1"}, False),
        ({"llm_base_url": "http://127.0.0.1:8089/v1", "llm_profile": "model"}, True),
        ({"llm_api_key": "gsk-test", "llm_profile": "offline"}, False),
        ({"llm_api_key": "gsk-test", "llm_mode": "evidence-only", "llm_profile": "model"}, False),
    ],
)
def test_a_self_hosted_model_writes_the_profile_only_when_asked(
    settings: dict[str, str], by_model: bool
) -> None:
    """A server with one slot would take the profile's calls ahead of the briefings."""
    chosen = profile_synthesizer(LLMSettings(_env_file=None, **settings), HashingEmbedder())  # type: ignore[call-arg]
    assert isinstance(chosen, LLMProfileSynthesizer) is by_model
