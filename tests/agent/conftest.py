"""Agents over fake memory roles, with the real groq SDK talking to a scripted model through MockTransport."""

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from tenacity import wait_none

from agent.briefing.loop import Agent
from agent.briefing.profile_evidence import ProfileSource
from agent.endpoint import EndpointChatModel
from agent.settings import LLMSettings
from tests.agent.fakes import FakeProfiles, FakeRecall, WatchedRecall, record
from tests.agent.scripted import ScriptedModel


def history(recall: FakeRecall) -> FakeRecall:
    """Three past incidents on three services."""
    recall.add(record("INC-0001"))
    recall.add(
        record(
            "INC-0002",
            "payment-gateway",
            symptom="payment confirmations timing out",
            error_signature="HTTP 429 Too Many Requests from processor",
            root_cause="retry bursts without backoff got us rate-limited by the processor",
            resolution_steps="1. Add exponential backoff with jitter\n2. Dead-letter the failures",
            runbook_used="runbooks/payments-rate-limit.md",
            outcome="Confirmations recovered",
            failed_attempts="Raising the retry count made the rate limiting worse",
        )
    )
    recall.add(
        record(
            "INC-0003",
            "auth-service",
            symptom="401 wave after key rotation",
            error_signature="JWT signature verification failed",
            root_cause="signing key reached 2 of 6 pods",
            resolution_steps="Roll the key to every pod",
            runbook_used="runbooks/jwt-rotation.md",
            outcome="Logins recovered",
            failed_attempts="",
        )
    )
    return recall


@pytest.fixture
def recall() -> FakeRecall:
    return history(FakeRecall())


@pytest.fixture
def bank() -> WatchedRecall:
    """The same history behind a recall that watches for writes: the agent must make none."""
    watched = WatchedRecall()
    history(watched)
    return watched


@pytest.fixture
def profiles() -> FakeProfiles:
    return FakeProfiles()


def llm_settings(**overrides: object) -> LLMSettings:
    values: dict[str, object] = {"llm_api_key": "test-key", "llm_max_retries": 2, "llm_timeout_s": 5.0}
    values.update(overrides)
    return LLMSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
async def make_agent(bank: WatchedRecall, profiles: FakeProfiles) -> AsyncIterator[Callable[..., Agent]]:
    made: list[EndpointChatModel] = []

    def build(script: ScriptedModel, *, memory_bank: FakeRecall | None = None) -> Agent:
        target = memory_bank or bank
        client = httpx.AsyncClient(transport=script.transport())
        model = EndpointChatModel(llm_settings(), http_client=client, backoff=wait_none())
        made.append(model)
        return Agent(model=model, bank=target, memory_timeout_s=5.0, profile=ProfileSource(profiles))

    yield build
    for model in made:
        await model.aclose()
