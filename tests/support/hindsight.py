"""A real Hindsight server for tests and local benchmarks: no torch, no network, loopback only.

Three processes on free loopback ports, started in order and stopped in reverse, each by its PID:

1. PostgreSQL with pgvector from ``pg0`` (the ``.hs`` venv), as an unprivileged user because initdb
   refuses root; the unpacked binaries are cached in ``.hs/pg-home``, the data lives in a temp dir.
2. ``tests.support.embeddings_server``: the project's MiniLM embedder behind ``/v1/embeddings``.
3. ``hindsight-api`` with the mock LLM (reflect and mental models answer without a model), the RRF
   reranker, chunk extraction sized so one incident record is one fact carrying its whole text, and
   no graph retrieval arm (without extracted entities it only adds noise).

``make hindsight-env`` prepares the venv and the user. A server that cannot start raises: the tests
that need it fail, they never skip. Run ``python -m tests.support.hindsight`` to keep one up by hand
(for ``recallops bench ... --hindsight-url``).
"""

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from memory.hindsight import HindsightBank
from memory.settings import MemorySettings
from tests.support.net import free_port, http_ok, wait_for

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("RECALLOPS_HINDSIGHT_VENV", ROOT / ".hs"))
RUN_USER = os.environ.get("RECALLOPS_HINDSIGHT_USER", "recallops-hs")
DB_USER = DB_PASSWORD = DB_NAME = "hindsight"
CHUNK_CHARS = 16000  # one chunk per record: each fact carries the whole labeled text


@dataclass
class HindsightServer:
    url: str
    database_url: str
    embeddings_url: str
    api: "Child"
    startup_s: float

    def stop_api(self) -> None:
        """Take the API down (the database stays), e.g. to show that writes queue until it is back."""
        self.api.stop()

    def start_api(self, timeout: float = 180.0) -> None:
        """Bring the API back on the same port and database."""
        self.api.start(timeout)

    def log(self) -> str:
        return self.api.tail()

    def bank_ids(self) -> set[str]:
        """The ids of the banks the server has."""
        response = httpx.get(f"{self.url}/v1/default/banks", timeout=30)
        response.raise_for_status()
        return {bank["bank_id"] for bank in response.json()["banks"]}

    def documents(self, bank_id: str) -> list[dict[str, Any]]:
        """The bank's documents as the server lists them (one per retained record id)."""
        response = httpx.get(
            f"{self.url}/v1/default/banks/{bank_id}/documents", params={"limit": 1000}, timeout=30
        )
        response.raise_for_status()
        items: list[dict[str, Any]] = response.json()["items"]
        return items


def _pg0() -> Path:
    matches = sorted(VENV.glob("lib/python*/site-packages/pg0/bin/pg0"))
    if not matches or not (VENV / "bin" / "hindsight-api").exists():
        raise RuntimeError(f"no Hindsight environment in {VENV}: run `make hindsight-env`")
    return matches[0]


def _as_run_user(args: list[str], home: Path) -> list[str]:
    env = ["env", f"HOME={home}"]
    if os.geteuid() != 0:
        return [*env, *args]
    return ["runuser", "-u", RUN_USER, "--", *env, *args]


def _owned_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(RUN_USER)
        except KeyError:
            raise RuntimeError(f"no user {RUN_USER!r} to run PostgreSQL: run `make hindsight-env`") from None
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


@contextmanager
def _postgres(work: Path) -> Iterator[str]:
    pg0 = _pg0()
    home = _owned_dir(VENV / "pg-home")
    data = _owned_dir(work / "pg")
    name = f"recallops-{uuid.uuid4().hex[:10]}"
    port = free_port()
    start = [str(pg0), "start", "--name", name, "-p", str(port), "-d", str(data / "data")]
    start += ["-u", DB_USER, "-P", DB_PASSWORD, "-n", DB_NAME]
    start += ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off"]
    done = subprocess.run(_as_run_user(start, home), capture_output=True, text=True, timeout=120)
    try:
        if done.returncode != 0:
            raise RuntimeError(f"pg0 start failed ({done.returncode}): {done.stdout}{done.stderr}")
        yield f"postgresql://{DB_USER}:{DB_PASSWORD}@127.0.0.1:{port}/{DB_NAME}"
    finally:
        subprocess.run(
            _as_run_user([str(pg0), "drop", "--name", name, "--force"], home),
            capture_output=True,
            timeout=120,
        )


@dataclass
class Child:
    """A child process, ready once ``ready_url`` answers 200, stopped by its PID; restartable."""

    args: list[str]
    env: dict[str, str]
    log: Path
    ready_url: str
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float) -> None:
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(
                self.args, env=self.env, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT
            )
        try:
            wait_for(self._up, timeout=timeout, interval=0.2, what=f"{self.ready_url} to answer")
        except TimeoutError as exc:
            self.stop()
            raise RuntimeError(f"{exc}\n{self.tail()}") from None

    def _up(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(
                f"{Path(self.args[0]).name} exited with {self.process.returncode}:\n{self.tail()}"
            )
        return http_ok(self.ready_url)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@contextmanager
def _running(child: Child, timeout: float) -> Iterator[Child]:
    child.start(timeout)
    try:
        yield child
    finally:
        child.stop()


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "RECALLOPS_"))}


@contextmanager
def hindsight_server(*, timeout: float = 180.0) -> Iterator[str]:
    """Yield the base URL of a fresh server (see ``running_hindsight``), stopped when the block ends."""
    with running_hindsight(timeout=timeout) as server:
        yield server.url


@contextmanager
def running_hindsight(*, timeout: float = 180.0) -> Iterator[HindsightServer]:
    """Start PostgreSQL, the embeddings endpoint and hindsight-api; yield once ``/health`` answers."""
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="recallops-hindsight-"))
    work.chmod(0o711)  # the PostgreSQL user must reach its data dir inside
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        database_url = stack.enter_context(_postgres(work))
        embeddings_port = free_port()
        embeddings_url = f"http://127.0.0.1:{embeddings_port}/v1"
        embeddings = Child(
            [sys.executable, "-m", "tests.support.embeddings_server", "--port", str(embeddings_port)],
            env={**_base_env(), "PYTHONPATH": str(ROOT)},
            log=work / "embeddings.log",
            ready_url=f"http://127.0.0.1:{embeddings_port}/health",
        )
        stack.enter_context(_running(embeddings, timeout))
        api_port = free_port()
        env = {
            **_base_env(),
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_API_PORT": str(api_port),
            "HINDSIGHT_API_WORKER_ID": f"test-{api_port}",
            "HINDSIGHT_API_DATABASE_URL": database_url,
            "HINDSIGHT_API_LLM_PROVIDER": "mock",
            "HINDSIGHT_API_RERANKER_PROVIDER": "rrf",
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "openai",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL": embeddings_url,
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY": "loopback",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL": "all-MiniLM-L6-v2",
            "HINDSIGHT_API_RETAIN_EXTRACTION_MODE": "chunks",
            "HINDSIGHT_API_RETAIN_CHUNK_SIZE": str(CHUNK_CHARS),
            # Chunk facts carry no entities, so the graph arm only walks similarity links to a few hub
            # records and fuses them in first for every query (unscoped MRR@10 0.20 with it, 0.39 without,
            # on the post-mortem corpus of `recallops bench retrieval`).
            "HINDSIGHT_API_ENABLE_GRAPH_RETRIEVAL": "false",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        url = f"http://127.0.0.1:{api_port}"
        api = Child([str(VENV / "bin" / "hindsight-api")], env, work / "hindsight-api.log", f"{url}/health")
        stack.enter_context(_running(api, timeout))
        yield HindsightServer(
            url=url,
            database_url=database_url,
            embeddings_url=embeddings_url,
            api=api,
            startup_s=time.monotonic() - started,
        )


def hindsight_bank(url: str, *, bank_id: str | None = None, timeout_s: float = 30.0) -> HindsightBank:
    """A driver on a bank of its own (a fresh id unless given), so tests never see each other's records."""
    settings = MemorySettings(
        memory="hindsight",
        hindsight_base_url=url,
        bank_id=bank_id or f"test-{uuid.uuid4().hex[:12]}",
        memory_timeout_s=timeout_s,
    )
    return HindsightBank(settings)


def main() -> None:
    with running_hindsight() as server:
        print(f"Hindsight at {server.url} (ready in {server.startup_s:.1f}s); Ctrl-C stops it", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        with suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
