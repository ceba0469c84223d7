"""A scripted OpenAI-compatible chat server on loopback, reached by the real groq SDK over HTTP.

Serves ``POST /openai/v1/chat/completions`` (the path the groq SDK calls under its base URL) and
``/v1/chat/completions`` (where the ``openai`` SDK posts under a ``/v1`` base URL). Each request is
answered with the next scripted reply, or by ``fallback`` once the script is used up, after
``delay_s`` (a slow model); every request body, its headers and its path are kept for assertions.
"""

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.net import free_port, wait_for

Reply = dict[str, Any] | Response
Fallback = Callable[[dict[str, Any]], Reply]


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call-1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
    }


def answer(body: dict[str, Any] | str) -> dict[str, Any]:
    return {"role": "assistant", "content": body if isinstance(body, str) else json.dumps(body)}


def completion(message: dict[str, Any], model: str = "openai/gpt-oss-120b") -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def refuse(_: dict[str, Any]) -> Reply:
    return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)


@dataclass
class ScriptedLLM:
    replies: list[Reply] = field(default_factory=list)
    fallback: Fallback = refuse
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    delay_s: float = 0.0
    port: int = 0
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.paths.append(request.url.path)
            reply = self.replies.pop(0) if self.replies else self.fallback(body)
        await asyncio.sleep(self.delay_s)
        if isinstance(reply, Response):
            return reply
        return JSONResponse(completion(reply, body.get("model", "openai/gpt-oss-120b")))

    def start(self) -> "ScriptedLLM":
        routes = [
            Route("/openai/v1/chat/completions", self._complete, methods=["POST"]),
            Route("/v1/chat/completions", self._complete, methods=["POST"]),
        ]
        self.port = self.port or free_port()
        config = uvicorn.Config(
            Starlette(routes=routes), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        wait_for(
            lambda: self._server is not None and self._server.started, timeout=15, what="scripted LLM up"
        )
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
