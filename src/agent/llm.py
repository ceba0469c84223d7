"""The Groq chat model, and the choice between it and the evidence-only planner.

The SDK's own retries are off: tenacity retries rate limits (429), server errors (5xx), timeouts and
connection failures with exponential backoff and jitter, honouring ``Retry-After`` up to a cap, so
the policy is visible and testable. Anything still failing becomes ``LLMUnavailable``, which the
loop turns into an evidence-only briefing with a warning.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import groq
import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from agent.briefing.planner import EvidenceOnlyPlanner
from agent.core.conversation import LLMUnavailable, MalformedTurn, Model, ModelTurn, ToolCall
from agent.core.schema import Mode, TokenUsage
from agent.settings import LLMSettings
from incidents.timeutil import utcnow

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 20.0


@dataclass
class LLMStatus:
    """The last outcome of a model call in this process, for readiness checks and the operator."""

    last_ok_at: datetime | None = None
    last_error_at: datetime | None = None
    last_error: str | None = None

    @property
    def ok(self) -> bool:
        if self.last_error_at is None:
            return True
        return self.last_ok_at is not None and self.last_ok_at > self.last_error_at

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "last_ok_at": self.last_ok_at.isoformat() if self.last_ok_at else None,
            "last_error_at": self.last_error_at.isoformat() if self.last_error_at else None,
            "last_error": self.last_error,
        }


STATUS = LLMStatus()


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, groq.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, groq.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


class _RetryAfterOrBackoff(wait_base):
    """Wait what the server asked for (``Retry-After``, capped), else exponential backoff with jitter."""

    def __init__(self, backoff: wait_base) -> None:
        self._backoff = backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, groq.APIStatusError):
            header = exc.response.headers.get("retry-after")
            try:
                if header is not None:
                    return min(max(float(header), 0.0), MAX_RETRY_AFTER_S)
            except ValueError:
                pass
        return self._backoff(retry_state)


class GroqChatModel:
    """``openai/gpt-oss-120b`` on Groq by default; any OpenAI-compatible gateway via the base URL."""

    mode: Mode = "llm"

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.AsyncClient | None = None,
        backoff: wait_base | None = None,
    ) -> None:
        self.name = settings.llm_model
        self._settings = settings
        self._client = groq.AsyncGroq(
            api_key=settings.groq_api_key or "unset",
            base_url=settings.llm_base_url,
            timeout=settings.llm_timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._wait = _RetryAfterOrBackoff(backoff or wait_random_exponential(multiplier=0.5, max=8))

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> ModelTurn:
        kwargs: dict[str, Any] = {
            "model": self._settings.llm_model,
            "messages": messages,
            "max_tokens": self._settings.llm_max_tokens,
            "temperature": 0.2,
        }
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(self._settings.llm_max_retries + 1),
                wait=self._wait,
                reraise=True,
            ):
                with attempt:
                    response = await self._client.chat.completions.create(**kwargs)
        except groq.BadRequestError as exc:
            if _error_field(exc, "code") == "tool_use_failed":
                generated = _error_field(exc, "failed_generation") or ""
                raise MalformedTurn(f"{_message(exc)} Generated: {generated[:500]}") from exc
            raise _unavailable(f"the model answered HTTP {exc.status_code}: {_message(exc)}") from exc
        except groq.APIStatusError as exc:
            raise _unavailable(f"the model answered HTTP {exc.status_code}: {_message(exc)}") from exc
        except groq.APIError as exc:
            raise _unavailable(f"the model could not be reached: {type(exc).__name__}: {exc}") from exc
        STATUS.last_ok_at = utcnow()
        if not response.choices:
            raise LLMUnavailable("the model returned no choices")
        message = response.choices[0].message
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
            for c in (message.tool_calls or [])
        ]
        usage = None
        if response.usage is not None:
            usage = TokenUsage(
                prompt_tokens=response.usage.prompt_tokens or 0,
                completion_tokens=response.usage.completion_tokens or 0,
                total_tokens=response.usage.total_tokens or 0,
            )
        return ModelTurn(content=message.content, tool_calls=calls, usage=usage)

    async def aclose(self) -> None:
        await self._client.close()


def _unavailable(reason: str) -> LLMUnavailable:
    STATUS.last_error, STATUS.last_error_at = reason, utcnow()
    return LLMUnavailable(reason)


def _error_field(exc: groq.APIStatusError, name: str) -> str | None:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    value = error.get(name) if isinstance(error, dict) else None
    return str(value) if value is not None else None


def _message(exc: groq.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
    return str(exc)[:300]


def open_model(settings: LLMSettings) -> Model:
    """Groq when configured (a key, or ``RECALLOPS_LLM_MODE=groq``), else the evidence-only planner."""
    if settings.uses_groq:
        return GroqChatModel(settings)
    return EvidenceOnlyPlanner()
