"""A loopback receiver for the generic JSON webhook that verifies signatures as the docs tell users to."""

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.net import free_port

MAX_SKEW_S = 300


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """The verification snippet of docs/notifications.md, verbatim in spirit: HMAC over ts + '.' + body."""
    if abs(time.time() - int(timestamp)) > MAX_SKEW_S:
        return False
    expected = "v1=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


@dataclass
class WebhookReceiver:
    secret: str
    port: int = 0
    payloads: list[dict[str, Any]] = field(default_factory=list)
    rejected: int = 0
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/recallops"

    def start(self) -> "WebhookReceiver":
        self.port = self.port or free_port()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ok = verify(
                    receiver.secret,
                    self.headers.get("X-RecallOps-Timestamp", "0"),
                    body,
                    self.headers.get("X-RecallOps-Signature", ""),
                )
                if ok:
                    receiver.payloads.append(json.loads(body))
                else:
                    receiver.rejected += 1
                self.send_response(204 if ok else 401)
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
