"""The chat model behind an HTTP endpoint: Groq, or any OpenAI-compatible ``/v1`` server.

Groq is reached through the ``groq`` SDK (the default); any server documenting an OpenAI-compatible
``/v1`` base URL through the ``openai`` SDK, which speaks that convention as the servers document it
(``{base}/chat/completions``). The two SDKs are generated from one design, so one code path drives
both: the same call, the same error classes under two names, the same response shape. Importing them
takes seconds, so only ``agent.llm.open_model`` imports this module, and only when a model is set.

The SDKs' own retries are off: tenacity retries what never reached the model or was turned away
(429, 5xx, a refused connection), with exponential backoff and jitter, honouring ``Retry-After`` up
to a cap. A request that timed out is never sent again: a slow model would only get the same long
prompt again, and the hop would take several timeouts instead of one. Anything still failing
becomes ``LLMUnavailable``, which the loop turns into an evidence-only briefing with a warning.
"""

import asyncio
import json
import logging
from typing import Any

import groq
import httpx
import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from agent.core.conversation import LLMUnavailable, MalformedTurn, ModelTurn, ToolCall
from agent.core.schema import Mode, TokenUsage
from agent.llm import STATUS
from agent.settings import LLMSettings
from incidents.queue.backoff import retry_after_seconds
from incidents.timeutil import utcnow

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 20.0
CONNECT_TIMEOUT_S = 10.0

_API_ERROR = (groq.APIError, openai.APIError)
_STATUS_ERROR = (groq.APIStatusError, openai.APIStatusError)
_BAD_REQUEST = (groq.BadRequestError, openai.BadRequestError)
_CONNECTION_ERROR = (groq.APIConnectionError, openai.APIConnectionError)
_TIMEOUT = (groq.APITimeoutError, openai.APITimeoutError, TimeoutError)  # TimeoutError: the total deadline


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, _TIMEOUT):
        return False
    if isinstance(exc, _CONNECTION_ERROR):
        return True
    if isinstance(exc, _STATUS_ERROR):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


class _RetryAfterOrBackoff(wait_base):
    """Wait what the server asked for (``Retry-After``, capped), else exponential backoff with jitter."""

    def __init__(self, backoff: wait_base) -> None:
        self._backoff = backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, _STATUS_ERROR):
            asked = retry_after_seconds(exc.response.headers.get("retry-after"), cap_s=MAX_RETRY_AFTER_S)
            if asked is not None:
                return asked
        return self._backoff(retry_state)


def forced_answer_format(tool: dict[str, Any]) -> dict[str, Any]:
    """A ``response_format`` whose only valid answer is a call of ``tool``: ``{name, arguments}``."""
    function = tool["function"]
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "const": function["name"]},
            "arguments": function["parameters"],
        },
        "required": ["name", "arguments"],
    }
    return {"type": "json_schema", "json_schema": {"name": function["name"], "schema": schema}}


class EndpointChatModel:
    """A chat model behind an endpoint: Groq by default, any OpenAI-compatible ``/v1`` base URL else."""

    mode: Mode = "llm"

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.AsyncClient | None = None,  # Groq's transport, for tests
        backoff: wait_base | None = None,
    ) -> None:
        self.name = settings.llm_model
        self._settings = settings
        connect = min(CONNECT_TIMEOUT_S, settings.timeout_s)
        key = settings.llm_api_key or "unset"
        self._client: openai.AsyncOpenAI | groq.AsyncGroq
        if settings.endpoint == "openai-compatible":
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=settings.llm_base_url,
                timeout=openai.Timeout(settings.timeout_s, connect=connect),
                max_retries=0,
            )
        else:
            self._client = groq.AsyncGroq(
                api_key=key,
                base_url=settings.llm_base_url,
                timeout=groq.Timeout(settings.timeout_s, connect=connect),
                max_retries=0,
                http_client=http_client,
            )
        self._wait = _RetryAfterOrBackoff(backoff or wait_random_exponential(multiplier=0.5, max=8))

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        require: str | None = None,
    ) -> ModelTurn:
        """One turn; ``require`` names a tool the turn must call (the loop checks that it did)."""
        kwargs: dict[str, Any] = {
            "model": self._settings.llm_model,
            "messages": messages,
            "max_tokens": self._settings.llm_max_tokens,
            "temperature": 0.2,
        }
        forced = next((t for t in tools or [] if t["function"]["name"] == require), None)
        if forced is not None and self._settings.llm_force_call == "loop":
            return ModelTurn(content=None)  # the loop makes the call itself
        if forced is not None and self._settings.llm_force_call == "json_schema":
            kwargs["response_format"] = forced_answer_format(forced)
        elif tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = (
                {"type": "function", "function": {"name": require}} if forced is not None else "auto"
            )
        body = await self._create(kwargs)
        turn = _turn(body)
        if forced is not None and "response_format" in kwargs:
            return _as_call(turn, require or "")
        return turn

    async def _create(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(self._settings.llm_max_retries + 1),
                wait=self._wait,
                reraise=True,
            ):
                with attempt:
                    # A total deadline: the SDK's timeout bounds each read, not a server that drips.
                    async with asyncio.timeout(self._settings.timeout_s):
                        response = await self._client.chat.completions.create(**kwargs)
        except _TIMEOUT as exc:
            raise _unavailable(
                f"the model gave no answer within {self._settings.timeout_s:g} s "
                "(RECALLOPS_LLM_TIMEOUT_S); the request was not sent again"
            ) from exc
        except _BAD_REQUEST as exc:
            if _error_field(exc, "code") == "tool_use_failed":
                generated = _error_field(exc, "failed_generation") or ""
                raise MalformedTurn(f"{_message(exc)} Generated: {generated[:500]}") from exc
            raise _unavailable(f"the model answered HTTP {exc.status_code}: {_message(exc)}") from exc
        except _STATUS_ERROR as exc:
            raise _unavailable(f"the model answered HTTP {exc.status_code}: {_message(exc)}") from exc
        except _API_ERROR as exc:
            raise _unavailable(f"the model could not be reached: {type(exc).__name__}: {exc}") from exc
        STATUS.last_ok_at = utcnow()
        body: dict[str, Any] = response.model_dump()
        return body

    async def aclose(self) -> None:
        await self._client.close()


def _turn(body: dict[str, Any]) -> ModelTurn:
    """The turn in a chat completion, read the same way whichever SDK fetched it."""
    if not body.get("choices"):
        raise LLMUnavailable("the model returned no choices")
    message = body["choices"][0].get("message") or {}
    calls = [
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments") or "")
        for c in message.get("tool_calls") or []
        if c.get("function")
    ]
    usage = body.get("usage") or None
    return ModelTurn(
        content=message.get("content"),
        tool_calls=calls,
        usage=TokenUsage(
            prompt_tokens=usage.get("prompt_tokens") or 0,
            completion_tokens=usage.get("completion_tokens") or 0,
            total_tokens=usage.get("total_tokens") or 0,
        )
        if usage
        else None,
    )


def _as_call(turn: ModelTurn, name: str) -> ModelTurn:
    """A schema-constrained answer ``{name, arguments}`` as the tool call it stands for.

    An answer that is not one stays text: the loop then makes the call itself."""
    try:
        raw = json.loads(turn.content or "")
    except json.JSONDecodeError:
        return turn
    if not isinstance(raw, dict) or raw.get("name") != name or not isinstance(raw.get("arguments"), dict):
        return turn
    call = ToolCall(id=f"{name}-1", name=name, arguments=json.dumps(raw["arguments"]))
    return ModelTurn(content=None, tool_calls=[call], usage=turn.usage)


def _unavailable(reason: str) -> LLMUnavailable:
    STATUS.last_error, STATUS.last_error_at = reason, utcnow()
    return LLMUnavailable(reason)


def _error_body(exc: groq.APIStatusError | openai.APIStatusError) -> dict[str, Any] | None:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


def _error_field(exc: groq.APIStatusError | openai.APIStatusError, name: str) -> str | None:
    value = (_error_body(exc) or {}).get(name)
    return str(value) if value is not None else None


def _message(exc: groq.APIStatusError | openai.APIStatusError) -> str:
    message = _error_field(exc, "message")
    return (message or str(exc))[:300]
