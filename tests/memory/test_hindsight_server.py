"""The Hindsight driver against a real hindsight-api server: what the shared contract does not cover."""

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from memory.bank import MemoryUnavailable
from memory.config import default_bank_config
from memory.hindsight import HindsightBank
from memory.schema import IncidentRecord, format_record
from memory.service import log_incident, recall_similar_incidents
from tests.memory.conftest import wait_operation
from tests.support.hindsight import HindsightServer, hindsight_bank

pytestmark = pytest.mark.hindsight

T0 = datetime(2026, 4, 2, 3, 0, tzinfo=UTC)
OOM = IncidentRecord(
    incident_id="INC-8001",
    service="inventory-service",
    timestamp=T0,
    symptom="Inventory pods OOM-killed during the nightly stock sync.",
    error_signature="OOMKilled: container exceeded memory limit 2Gi (exit code 137)",
    root_cause="The sync loaded the whole catalogue into memory.",
    resolution_steps="Streamed the sync in pages of 500 items.",
    runbook_used="RB-inventory-sync",
    outcome="Nightly sync completes in 40 minutes without restarts.",
    failed_attempts="Raising the limit to 3Gi only delayed the kill.",
    resolved_by="sam",
)


@pytest.fixture
async def bank(hindsight_url: str) -> AsyncIterator[HindsightBank]:
    opened = hindsight_bank(hindsight_url)
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_new_bank_starts_with_the_company_mission_directives_and_dispositions(
    bank: HindsightBank,
) -> None:
    await log_incident(bank, OOM)  # the first write creates it
    config = await bank.get_config()
    expected = default_bank_config()
    assert config.mission == expected.mission
    assert config.directives == expected.directives
    assert config.dispositions["skepticism"] == 4 and config.dispositions["literalism"] == 4


async def test_reading_a_bank_the_server_does_not_have_answers_empty_and_leaves_no_bank(
    bank: HindsightBank, hindsight: HindsightServer
) -> None:
    """An operator pointing a read (memory copy --dry-run, the profile page) at a wrong bank name must
    not create that bank; the first write still does."""
    assert await bank.stored_tags(OOM.incident_id) is None
    assert await bank.recall(query="inventory pods killed for memory") == []
    assert (await bank.reflect(query="What keeps killing inventory pods?")).text == ""
    assert await bank.list_mental_models() == [] and await bank.get_mental_model("team-profile") is None
    assert await bank.get_operation("00000000-0000-0000-0000-000000000000") is None
    assert bank.bank_id not in hindsight.bank_ids()
    await log_incident(bank, OOM, severity="high")
    assert "severity:high" in (await bank.stored_tags(OOM.incident_id) or [])
    assert bank.bank_id in hindsight.bank_ids()


async def test_append_adds_a_correction_to_the_same_incident(bank: HindsightBank) -> None:
    await log_incident(bank, OOM, severity="high")
    await bank.retain(
        document_id=OOM.incident_id,
        content="Correction: the sync also leaked a cursor per page; streaming alone was not enough.",
        tags=["kind:correction"],
        metadata={"corrected_by": "lee"},
        timestamp=T0 + timedelta(days=2),
        update_mode="append",
    )
    found = await bank.recall(
        query="cursor leak in the nightly sync", tags=["kind:correction"], tags_match="any_strict", limit=5
    )
    assert [r.id for r in found] == [OOM.incident_id]
    incident = found[0]
    assert incident.text.startswith(format_record(OOM)) and "leaked a cursor" in incident.text
    assert {"service:inventory-service", "kind:incident", "kind:correction"} <= set(incident.tags)
    assert incident.metadata["incident_id"] == OOM.incident_id and incident.metadata["corrected_by"] == "lee"
    scoped = await recall_similar_incidents(
        bank, "inventory pods killed for memory", service="inventory-service"
    )
    assert [r.id for r in scoped] == [OOM.incident_id]
    health = await bank.health()
    assert health.documents == 1 and health.last_memory_seen_at is not None


async def test_a_long_alert_is_still_a_valid_query(bank: HindsightBank) -> None:
    await log_incident(bank, OOM)
    alert = "OOMKilled exit code 137 inventory-service sync " * 200  # far past the server's 500-token cap
    assert [r.id for r in await bank.recall(query=alert, limit=1)] == [OOM.incident_id]


def test_the_web_app_and_the_worker_thread_share_one_bank(hindsight_url: str) -> None:
    bank = hindsight_bank(hindsight_url)
    results: dict[str, list[str]] = {}

    async def worker() -> None:
        await log_incident(bank, OOM)
        results["worker"] = [r.id for r in await bank.recall(query="OOM during sync", limit=1)]

    thread = threading.Thread(target=asyncio.run, args=(worker(),))
    thread.start()
    thread.join(60)

    async def web() -> None:
        results["web"] = [r.id for r in await bank.recall(query="OOM during sync", limit=1)]
        await bank.close()

    asyncio.run(web())
    assert results == {"worker": [OOM.incident_id], "web": [OOM.incident_id]}


async def test_writes_fail_while_the_server_is_down_and_records_survive_a_restart(
    hindsight: HindsightServer,
) -> None:
    bank = hindsight_bank(hindsight.url, timeout_s=5.0)
    try:
        await log_incident(bank, OOM)
        hindsight.stop_api()
        try:
            with pytest.raises(MemoryUnavailable):
                await log_incident(bank, OOM)
            assert not (await bank.health()).ok
        finally:
            hindsight.start_api()
        assert [r.id for r in await bank.recall(query="OOM during the nightly sync", limit=3)] == [
            OOM.incident_id
        ]
        assert (await bank.health()).ok
    finally:
        await bank.close()


async def test_the_profile_refreshes_itself_after_new_records_are_consolidated(bank: HindsightBank) -> None:
    await log_incident(bank, OOM)
    created = await bank.create_mental_model(
        model_id="team-profile", name="Team profile", source_query="Patterns?"
    )
    assert (await wait_operation(bank, created)).status == "completed"
    model = await bank.get_mental_model("team-profile")
    assert model is not None and model.last_refreshed_at is not None
    first = model.last_refreshed_at
    await log_incident(bank, replace(OOM, incident_id="INC-8002", timestamp=T0 + timedelta(days=30)))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # no refresh asked for: the consolidation trigger does it
        current = await bank.get_mental_model("team-profile")
        if (
            current is not None
            and current.last_refreshed_at is not None
            and current.last_refreshed_at > first
        ):
            return
        await asyncio.sleep(0.2)
    pytest.fail("the mental model was not refreshed after consolidation within 120 s")
