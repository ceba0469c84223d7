"""A scripted OpenAI-compatible chat model, served through ``httpx.MockTransport`` to the real groq SDK."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Reply = dict[str, Any] | httpx.Response | Callable[[dict[str, Any]], httpx.Response]


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call-1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
    }


def answer(body: dict[str, Any] | str) -> dict[str, Any]:
    return {"role": "assistant", "content": body if isinstance(body, str) else json.dumps(body)}


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": "openai/gpt-oss-120b",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


@dataclass
class ScriptedModel:
    """Answers each request with the next scripted reply and keeps every request body."""

    replies: list[Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if not self.replies:
            return httpx.Response(500, json={"error": {"message": "script exhausted"}})
        reply = self.replies.pop(0)
        if isinstance(reply, httpx.Response):
            return reply
        if callable(reply):
            return reply(body)
        return httpx.Response(200, json=completion(reply))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)
