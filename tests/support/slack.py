"""A loopback stand-in for Slack: an incoming webhook and ``chat.postMessage``, answering as Slack does.

Every payload is checked as Block Kit with ``slack_sdk``'s own block models (each block parses back
to its model and passes its validation), so a message Slack would reject is a test failure here.
``fail_with`` queues answers to give before succeeding: ``(500, None)`` or ``(429, "2")`` for a 429
with ``Retry-After: 2``; ``answer_raw`` queues one given as it is (a status, a content type, a body).
"""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.models.blocks import Block

from tests.support.net import free_port

WEBHOOK_PATH = "/services/T000/B000/webhook-secret-path"


@dataclass
class SlackMessage:
    via: str  # webhook | api
    text: str
    blocks: list[dict[str, Any]]
    channel: str | None = None
    thread_ts: str | None = None
    ts: str | None = None
    token: str | None = None


@dataclass
class SlackReceiver:
    port: int = 0
    messages: list[SlackMessage] = field(default_factory=list)
    answers: list[tuple[int, str | None]] = field(default_factory=list)
    raw: list[tuple[int, str, bytes]] = field(default_factory=list)
    attempts: int = 0
    invalid: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def webhook_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{WEBHOOK_PATH}"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def fail_with(self, *answers: tuple[int, str | None]) -> None:
        with self._lock:
            self.answers.extend(answers)

    def answer_raw(self, status: int, content_type: str, body: bytes) -> None:
        with self._lock:
            self.raw.append((status, content_type, body))

    def start(self) -> "SlackReceiver":
        self.port = self.port or free_port()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.handle(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def handle(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        with self._lock:
            self.attempts += 1
            answer = self.answers.pop(0) if self.answers else None
            raw = self.raw.pop(0) if self.raw else None
        if raw is not None:
            status, content_type, data = raw
            request.send_response(status)
            request.send_header("Content-Type", content_type)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
            return
        if answer is not None:
            status, retry_after = answer
            request.send_response(status)
            if retry_after is not None:
                request.send_header("Retry-After", retry_after)
            request.end_headers()
            request.wfile.write(b"rate_limited" if status == 429 else b"error")
            return
        if request.path == WEBHOOK_PATH:
            self._webhook(request, json.loads(body))
        elif request.path == "/api/chat.postMessage":
            self._post_message(request, body)
        else:
            request.send_response(404)
            request.end_headers()
            request.wfile.write(b"no_service")

    def _valid_blocks(self, blocks: list[dict[str, Any]]) -> bool:
        try:
            for raw in blocks:
                parsed = Block.parse(raw)
                assert parsed is not None, f"unknown block {raw.get('type')}"
                parsed.validate_json()
                assert parsed.to_dict() == raw, f"block does not round-trip: {raw}"
        except Exception as exc:
            self.invalid.append(f"{type(exc).__name__}: {exc}")
            return False
        return bool(blocks)

    def _webhook(self, request: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
        blocks = payload.get("blocks") or []
        if not self._valid_blocks(blocks):
            request.send_response(400)
            request.end_headers()
            request.wfile.write(b"invalid_blocks")
            return
        with self._lock:
            self.messages.append(SlackMessage(via="webhook", text=payload.get("text", ""), blocks=blocks))
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.end_headers()
        request.wfile.write(b"ok")

    def _post_message(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        content_type = request.headers.get("Content-Type", "")
        if "json" in content_type:
            args = json.loads(body)
        else:
            args = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        blocks = args.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        answer: dict[str, Any]
        if not self._valid_blocks(blocks):
            answer = {"ok": False, "error": "invalid_blocks"}
        else:
            with self._lock:
                ts = f"1700000000.{len(self.messages) + 1:06d}"
                self.messages.append(
                    SlackMessage(
                        via="api",
                        text=args.get("text", ""),
                        blocks=blocks,
                        channel=args.get("channel"),
                        thread_ts=args.get("thread_ts"),
                        ts=ts,
                        token=token,
                    )
                )
            answer = {"ok": True, "channel": "C0ONCALL", "ts": ts}
        data = json.dumps(answer).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
