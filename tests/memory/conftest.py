"""The memory contract's fixtures: one ``bank`` per driver, fresh for every test.

The Hindsight side runs against a real hindsight-api server: ``tests.support.hindsight`` provides
``hindsight_server()``, a context manager that starts one (pg0, scripted LLM, loopback embeddings) and
yields its base URL. Every test gets its own bank id on it, created through ``memory.factory.open_bank``
exactly as the service opens it.
"""

import asyncio
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.bank import MemoryBank, Operation
from memory.embedded.bank import EmbeddedBank
from memory.embedder import MiniLMEmbedder
from memory.factory import default_synthesizer, open_bank
from memory.settings import MemorySettings
from tests.memory.fakes import HashingEmbedder, RecordingSynthesizer
from tests.support.hindsight import HindsightServer
from tests.support.net import free_port

DRIVERS = ["embedded", pytest.param("hindsight", marks=pytest.mark.hindsight)]
UNAVAILABLE_TIMEOUT_S = 1.0


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.warm()
    return embedder


@pytest.fixture(scope="session")
def hindsight_url(hindsight: HindsightServer) -> str:
    return hindsight.url


def settings_for(
    driver: str, request: pytest.FixtureRequest, data_dir: Path, **overrides: object
) -> MemorySettings:
    values: dict[str, object] = {
        "memory": driver,
        "data_dir": data_dir,
        "bank_id": f"contract-{uuid.uuid4().hex[:12]}",
    }
    if driver == "hindsight":
        values["hindsight_base_url"] = request.getfixturevalue("hindsight_url")
    values.update(overrides)
    return MemorySettings(**values)


@pytest.fixture(params=DRIVERS)
async def bank(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryBank]:
    settings = settings_for(request.param, request, tmp_path)
    if request.param == "embedded":
        # The factory's bank, but sharing one loaded model across tests.
        opened: MemoryBank = EmbeddedBank(
            settings,
            embedder=request.getfixturevalue("minilm"),
            synthesizer=default_synthesizer(request.getfixturevalue("minilm")),
        )
    else:
        opened = open_bank(settings)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(params=["embedded-locked", "embedded-unreachable", *DRIVERS[1:]])
async def unavailable_bank(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryBank]:
    """A bank that cannot take a write: its file write-locked by another process, or unreachable."""
    if request.param == "embedded-locked":
        settings = settings_for("embedded", request, tmp_path, memory_timeout_s=UNAVAILABLE_TIMEOUT_S)
        opened = EmbeddedBank(settings, embedder=HashingEmbedder(), synthesizer=RecordingSynthesizer())
        await opened.health()  # creates the file; then another connection holds its write lock
        holder = sqlite3.connect(settings.embedded_path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            yield opened
        finally:
            holder.execute("ROLLBACK")
            holder.close()
            await opened.close()
        return
    driver = "embedded" if request.param == "embedded-unreachable" else request.param
    async for opened in _unreachable(driver, request, tmp_path):
        yield opened


@pytest.fixture(params=DRIVERS)
async def unreachable_bank(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryBank]:
    """A bank whose store is not there at all: a data dir that is a file, or a closed port."""
    async for opened in _unreachable(request.param, request, tmp_path):
        yield opened


async def _unreachable(
    driver: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[MemoryBank]:
    if driver == "embedded":
        not_a_dir = tmp_path / "data-is-a-file"
        not_a_dir.write_text("")
        settings = settings_for("embedded", request, not_a_dir, memory_timeout_s=UNAVAILABLE_TIMEOUT_S)
        opened: MemoryBank = EmbeddedBank(
            settings, embedder=HashingEmbedder(), synthesizer=RecordingSynthesizer()
        )
    else:
        opened = open_bank(
            MemorySettings(
                memory="hindsight",
                data_dir=tmp_path,
                bank_id="unreachable",
                hindsight_base_url=f"http://127.0.0.1:{free_port()}",
                memory_timeout_s=UNAVAILABLE_TIMEOUT_S,
            )
        )
    try:
        yield opened
    finally:
        await opened.close()


async def wait_operation(bank: MemoryBank, operation: Operation, *, within_s: float = 120.0) -> Operation:
    """Poll an operation to its end, with a deadline."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        current = await bank.get_operation(operation.id)
        if current is not None and current.status in ("completed", "failed"):
            return current
        await asyncio.sleep(0.05)
    raise TimeoutError(f"operation {operation.id} did not finish within {within_s}s")
