"""Copying a bank into another (``memory.transfer``): embedded to embedded, and embedded to a real
Hindsight server, every record kept as it was, and a second copy writing nothing."""

import dataclasses
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.bank import DocumentWrite, MemoryBank
from memory.corrections import CorrectionRecord
from memory.embedded.bank import EmbeddedBank
from memory.history import Runbook
from memory.service import (
    PROFILE_ID,
    get_record,
    log_correction,
    log_incident,
    log_runbook,
    refresh_profile,
)
from memory.settings import MemorySettings
from memory.transfer import copy_bank, same_document
from tests.memory.conftest import wait_operation
from tests.memory.fakes import HashingEmbedder, RecordingSynthesizer
from tests.memory.test_contract import JWT, POOL
from tests.support.hindsight import HindsightServer, hindsight_bank

CORRECTION = CorrectionRecord(
    document_id=f"{POOL.incident_id}-correction-1",
    corrects=POOL.incident_id,
    service=POOL.service,
    timestamp=datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
    text="The pool was not too small: idle-in-transaction sessions held its connections.",
    author="dana",
)
RUNBOOK = Runbook(
    runbook_id="RB-checkout-db-pool",
    service="checkout-service",
    title="Checkout database pool",
    updated=datetime(2025, 11, 5, tzinfo=UTC),
    body="First checks:\n1. Pool usage per pod\nRisky actions:\n- Scaling pods multiplies connections",
)


def embedded(path: Path) -> EmbeddedBank:
    settings = MemorySettings(memory="embedded", data_dir=path)
    return EmbeddedBank(settings, embedder=HashingEmbedder(), synthesizer=RecordingSynthesizer())


async def team_bank(path: Path) -> EmbeddedBank:
    """A team's embedded bank: two incidents (one with a severity), a correction, a runbook, its profile."""
    bank = embedded(path)
    await log_incident(bank, POOL, severity="critical", metadata={"source": "resolution"})
    await log_incident(bank, JWT)
    await log_correction(bank, CORRECTION, severity="critical")
    await log_runbook(bank, RUNBOOK)
    await wait_operation(bank, await refresh_profile(bank, service=None))
    return bank


@pytest.fixture
async def laptop(tmp_path: Path) -> AsyncIterator[EmbeddedBank]:
    bank = await team_bank(tmp_path / "laptop")
    try:
        yield bank
    finally:
        await bank.close()


@pytest.fixture
async def shared(tmp_path: Path) -> AsyncIterator[EmbeddedBank]:
    bank = embedded(tmp_path / "shared")
    try:
        yield bank
    finally:
        await bank.close()


async def assert_holds_everything(source: MemoryBank, target: MemoryBank) -> None:
    ids = await source.document_ids()
    assert await target.document_ids() == ids
    for document_id in ids:
        written, copied = await source.document(document_id), await target.document(document_id)
        assert written is not None and copied is not None
        assert same_document(written, copied), (written, copied)


async def test_every_record_is_copied_with_its_fields_and_a_second_copy_writes_nothing(
    laptop: EmbeddedBank, shared: EmbeddedBank
) -> None:
    first = await copy_bank(laptop, shared)
    ids = [CORRECTION.document_id, POOL.incident_id, JWT.incident_id, RUNBOOK.runbook_id]
    assert sorted(w.document_id for w in first.copied) == sorted(ids)
    assert (first.already_there, first.failed_count) == (0, 0)
    assert first.skipped_models == [PROFILE_ID]
    await assert_holds_everything(laptop, shared)
    found = await get_record(shared, POOL.incident_id)  # a precedent cited by id still resolves
    assert found is not None and found.record == POOL and found.timestamp == POOL.timestamp
    assert "severity:critical" in found.tags and found.metadata["source"] == "resolution"

    again = await copy_bank(laptop, shared)
    assert (again.copied, again.already_there, again.failed_count) == ([], 4, 0)


async def test_a_record_changed_since_the_last_copy_is_copied_again(
    laptop: EmbeddedBank, shared: EmbeddedBank
) -> None:
    await copy_bank(laptop, shared)
    await log_incident(laptop, dataclasses.replace(JWT, outcome="Logins recovered after the key roll."))
    again = await copy_bank(laptop, shared)
    assert [w.document_id for w in again.copied] == [JWT.incident_id]
    assert again.already_there == 3
    await assert_holds_everything(laptop, shared)


async def test_a_dry_run_lists_what_it_would_copy_and_writes_nothing(
    laptop: EmbeddedBank, shared: EmbeddedBank
) -> None:
    await log_incident(shared, JWT)
    report = await copy_bank(laptop, shared, dry_run=True)
    assert report.dry_run
    assert sorted(w.document_id for w in report.copied) == sorted(
        [CORRECTION.document_id, POOL.incident_id, RUNBOOK.runbook_id]
    )
    assert report.already_there == 1
    assert await shared.document_ids() == [JWT.incident_id]


class Refusing:
    """A target that refuses one document and stores the rest in the bank it wraps."""

    def __init__(self, bank: EmbeddedBank, refused: str) -> None:
        self.bank, self.refused = bank, refused

    async def document_ids(self) -> list[str]:
        return await self.bank.document_ids()

    async def document(self, document_id: str) -> DocumentWrite | None:
        return await self.bank.document(document_id)

    async def retain_many(self, writes: Sequence[DocumentWrite]) -> None:
        if any(w.document_id == self.refused for w in writes):
            raise ValueError(f"{self.refused} refused")
        await self.bank.retain_many(writes)


async def test_a_record_the_target_refuses_fails_alone(laptop: EmbeddedBank, shared: EmbeddedBank) -> None:
    report = await copy_bank(laptop, Refusing(shared, JWT.incident_id))  # type: ignore[arg-type]
    assert report.failed == [(JWT.incident_id, f"{JWT.incident_id} refused")]
    assert len(report.copied) == 3
    assert JWT.incident_id not in await shared.document_ids()


@pytest.mark.hindsight
async def test_an_embedded_bank_is_copied_to_a_hindsight_server_and_back(
    laptop: EmbeddedBank, shared: EmbeddedBank, hindsight: HindsightServer
) -> None:
    server = hindsight_bank(hindsight.url)
    try:
        first = await copy_bank(laptop, server)
        assert (len(first.copied), first.already_there, first.failed_count) == (4, 0, 0)
        await assert_holds_everything(laptop, server)
        found = await get_record(server, POOL.incident_id)
        assert found is not None and found.record == POOL

        again = await copy_bank(laptop, server)
        assert (again.copied, again.already_there, again.failed_count) == ([], 4, 0)

        back = await copy_bank(server, shared)  # the server's records read back as they were written
        assert (len(back.copied), back.failed_count) == (4, 0)
        await assert_holds_everything(laptop, shared)
    finally:
        await server.close()
