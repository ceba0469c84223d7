"""A real RecallOps server in a subprocess on a free loopback port, with its own data directory."""

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.net import free_port, http_ok, wait_for


@dataclass
class LiveServer:
    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALLOPS_", "GROQ_"))}
        env.pop("DATABASE_URL", None)
        env.update({"RECALLOPS_DATA_DIR": str(self.data_dir), "RECALLOPS_WORKER_POLL_S": "0.1"})
        env.update(self.env)
        return env

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``recallops ARGS`` with this server's settings, as an operator would."""
        return subprocess.run(
            [sys.executable, "-m", "web.cli", *args],
            env=self.environ(),
            capture_output=True,
            text=True,
            check=check,
            timeout=300,
        )

    def start(self, timeout: float = 60.0) -> "LiveServer":
        return self.launch().wait_up(timeout)

    def launch(self) -> "LiveServer":
        """Start the process without waiting for it (to start several at once, as replicas do)."""
        self.port = self.port or free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "server.log"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "web.cli", "serve", "--port", str(self.port)],
                env=self.environ(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def wait_up(self, timeout: float = 60.0) -> "LiveServer":
        wait_for(lambda: self._alive() and http_ok(f"{self.url}/healthz"), timeout=timeout, what="server up")
        return self

    def kill(self) -> None:
        """SIGKILL, as a crashed machine or the OOM killer would: no shutdown code runs."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def _alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited early: {self.log()}")
        return True

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
