"""A scripted OpenAI-compatible chat model, served through ``httpx.MockTransport`` to the real groq SDK."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.scripted_llm import answer, completion, tool_call

__all__ = ["ScriptedModel", "answer", "tool_call"]

Reply = dict[str, Any] | httpx.Response | Callable[[dict[str, Any]], httpx.Response]


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
