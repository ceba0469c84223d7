"""An HTTP reverse proxy on a free loopback port that can hold chosen requests until told to let go.

Put it between one RecallOps replica and the real Hindsight server to freeze that replica's memory
writes (or recalls) mid-call, so a test can kill the replica while it holds leased work, knowing
exactly which work it holds. Requests that do not match ``hold`` always pass straight through.
"""

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx

from tests.support.net import free_port

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class HoldingProxy:
    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.port = free_port()
        self._pattern: re.Pattern[str] | None = None
        self._released = threading.Event()
        self._released.set()
        self.held = 0  # requests waiting right now
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=120)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            owner: ClassVar[HoldingProxy] = proxy

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                self.owner._wait_if_held(self.command, self.path)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                try:
                    upstream = self.owner._client.request(
                        self.command, self.owner.target + self.path, headers=headers, content=body
                    )
                except httpx.HTTPError:
                    self.send_error(502)
                    return
                with suppress(OSError):
                    self.send_response(upstream.status_code)
                    for key, value in upstream.headers.items():
                        if key.lower() not in _HOP_BY_HOP and key.lower() != "content-encoding":
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(upstream.content)))
                    self.end_headers()
                    self.wfile.write(upstream.content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def hold(self, pattern: str) -> None:
        """From now on, requests whose ``METHOD path`` matches ``pattern`` wait until ``release``."""
        self._pattern = re.compile(pattern)
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def _wait_if_held(self, method: str, path: str) -> None:
        pattern = self._pattern
        if self._released.is_set() or pattern is None or not pattern.search(f"{method} {path}"):
            return
        with self._lock:
            self.held += 1
        self._released.wait()
        with self._lock:
            self.held -= 1

    def start(self) -> "HoldingProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._client.close()


@contextmanager
def holding_proxy(target: str) -> Iterator[HoldingProxy]:
    proxy = HoldingProxy(target).start()
    try:
        yield proxy
    finally:
        proxy.stop()
