"""A real Prometheus Alertmanager (Debian's ``prometheus-alertmanager``) on a free loopback port.

Its webhook receiver points at a RecallOps server with a bearer token, exactly as the docs tell an
operator to configure it; a second webhook can point at a ``WebhookCapture`` so a test holds the very
bytes Alertmanager sent and can deliver them again.
"""

import json
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from tests.support.net import free_port, http_ok, wait_for


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} not found: install Debian's 'prometheus-alertmanager' package")
    return path


@dataclass
class WebhookCapture:
    """A loopback HTTP endpoint that records every body posted to it."""

    bodies: list[bytes] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/capture"

    def payloads(self) -> list[dict[str, Any]]:
        return [json.loads(body) for body in list(self.bodies)]

    def start(self) -> "WebhookCapture":
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                capture.bodies.append(self.rfile.read(length))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@dataclass
class Alertmanager:
    workdir: Path
    webhook_url: str
    token: str
    extra_webhooks: list[str] = field(default_factory=list)
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, Any]:
        webhooks: list[dict[str, Any]] = [
            {
                "url": self.webhook_url,
                "send_resolved": True,
                "http_config": {"authorization": {"type": "Bearer", "credentials": self.token}},
            }
        ]
        webhooks += [{"url": url, "send_resolved": True} for url in self.extra_webhooks]
        return {
            "route": {
                "receiver": "recallops",
                "group_by": ["alertname", "service"],
                "group_wait": "1s",
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [{"name": "recallops", "webhook_configs": webhooks}],
        }

    def start(self, timeout: float = 30.0) -> "Alertmanager":
        self.port = self.port or free_port()
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "alertmanager.yml"
        config.write_text(yaml.safe_dump(self.config()))
        log = (self.workdir / "alertmanager.log").open("ab")
        self.process = subprocess.Popen(
            [
                _binary("prometheus-alertmanager"),
                f"--config.file={config}",
                f"--storage.path={self.workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_for(
            lambda: self._alive() and http_ok(f"{self.url}/-/ready"),
            timeout=timeout,
            what="alertmanager ready",
        )
        return self

    def _alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"alertmanager exited: {self.log()}")
        return True

    def log(self) -> str:
        path = self.workdir / "alertmanager.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def amtool_add(
        self, labels: dict[str, str], *, start: datetime, end: datetime | None = None, summary: str = ""
    ) -> None:
        """``amtool alert add``: fires an alert, or resolves it when ``end`` is in the past."""
        args = [
            _binary("amtool"),
            f"--alertmanager.url={self.url}",
            "alert",
            "add",
            *(f"{name}={value}" for name, value in labels.items()),
            f"--start={start.isoformat()}",
        ]
        if end is not None:
            args.append(f"--end={end.isoformat()}")
        if summary:
            args.append(f"--annotation=summary={summary}")
        subprocess.run(args, check=True, capture_output=True, timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
