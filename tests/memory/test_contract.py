"""The memory contract: every driver behaves the same, checked on each one against a real store."""

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from memory.bank import BankConfig, MemoryBank, MemoryUnavailable, TagsMatch
from memory.schema import IncidentRecord
from memory.service import incident_write, log_incident, log_incidents, recall_similar_incidents
from tests.memory.conftest import UNAVAILABLE_TIMEOUT_S, wait_operation

T0 = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)


def record(
    incident_id: str, service: str, days: int, symptom: str, signature: str, cause: str, fix: str
) -> IncidentRecord:
    return IncidentRecord(
        incident_id=incident_id,
        service=service,
        timestamp=T0 + timedelta(days=days),
        symptom=symptom,
        error_signature=signature,
        root_cause=cause,
        resolution_steps=fix,
        runbook_used=f"RB-{service}",
        outcome="Resolved; customer impact ended.",
        failed_attempts="Restarting pods did not help.",
        resolved_by="dana",
    )


POOL = record(
    "INC-7001",
    "checkout-service",
    0,
    "Checkout requests time out during a flash sale; p99 latency above 5 seconds.",
    "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "The Postgres connection pool was sized for average load, not for the flash-sale peak.",
    "Raised the pool size within the database's max_connections and added a circuit breaker.",
)
RETRY = record(
    "INC-7002",
    "payment-gateway",
    3,
    "Payment confirmations time out and the processor answers 429 Too Many Requests.",
    "ProcessorRateLimited: 429 from card processor after retry storm",
    "Retries without backoff multiplied traffic and the processor rate-limited the company.",
    "Added exponential backoff with jitter and a dead-letter queue for failed confirmations.",
)
JWT = record(
    "INC-7003",
    "auth-service",
    6,
    "A wave of 401 Unauthorized responses after the signing key rotation.",
    "JWTVerificationError: signature verification failed (kid not found)",
    "The new JWT signing key reached only 2 of 6 pods; the rest rejected fresh tokens.",
    "Rolled the key to every pod and verified the key set before switching issuers.",
)
OOM = record(
    "INC-7004",
    "inventory-service",
    9,
    "Inventory pods are OOM-killed during the nightly stock sync.",
    "OOMKilled: container exceeded memory limit 2Gi (exit code 137)",
    "The nightly sync loaded the whole catalogue into memory instead of streaming pages.",
    "Streamed the sync in pages of 500 items and raised the limit to 3Gi as a stopgap.",
)
POOL_AGAIN = record(
    "INC-7005",
    "checkout-service",
    12,
    "Checkout latency spikes and connection timeouts while a marketing campaign peaks.",
    "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    "The connection pool was exhausted again; a new service shared the same database limit.",
    "Split the database budget between services and raised the pool with PgBouncer in front.",
)
ALL = [POOL, RETRY, JWT, OOM, POOL_AGAIN]


async def test_round_trip_returns_the_whole_incident(bank: MemoryBank) -> None:
    await log_incident(bank, POOL, severity="critical")
    found = await bank.recall(query="checkout timeouts because the database pool ran out", limit=1)
    assert [r.id for r in found] == ["INC-7001"]
    incident = found[0]
    assert incident.record == POOL
    assert {"service:checkout-service", "kind:incident", "severity:critical"} <= set(incident.tags)
    assert incident.metadata["incident_id"] == "INC-7001"
    assert incident.timestamp == POOL.timestamp
    assert incident.score > 0
    assert incident.why and all(rank >= 1 for rank in incident.why.values())


async def test_reseeding_twice_leaves_one_record_per_incident(bank: MemoryBank) -> None:
    for _ in range(2):
        for rec in ALL:
            await log_incident(bank, rec)
    found = await bank.recall(query="incident root cause resolution", budget="high", limit=20)
    ids = [r.id for r in found]
    assert sorted(ids) == sorted(r.incident_id for r in ALL)


async def test_a_batch_is_stored_as_the_same_records_one_by_one(bank: MemoryBank) -> None:
    await log_incidents(bank, [incident_write(rec, severity="high") for rec in ALL])
    await log_incidents(bank, [incident_write(POOL, severity="critical")])  # replaces, never duplicates
    found = await bank.recall(query="incident root cause resolution", budget="high", limit=20)
    assert sorted(r.id for r in found) == sorted(r.incident_id for r in ALL)
    assert {r.id: r.record for r in found} == {rec.incident_id: rec for rec in ALL}
    assert "severity:critical" in (await bank.stored_tags(POOL.incident_id) or [])


async def test_a_batch_with_one_bad_write_stores_none(bank: MemoryBank) -> None:
    naive = incident_write(JWT)
    bad = dataclasses.replace(naive, timestamp=naive.timestamp.replace(tzinfo=None))
    with pytest.raises(ValueError, match="timezone-aware"):
        await log_incidents(bank, [incident_write(POOL), bad])
    assert await bank.stored_tags(POOL.incident_id) is None


async def test_stored_tags_say_what_an_id_holds(bank: MemoryBank) -> None:
    await log_incident(bank, POOL)
    tags = await bank.stored_tags(POOL.incident_id)
    assert tags is not None and "kind:incident" in tags and "service:checkout-service" in tags
    assert await bank.stored_tags("INC-0000-never-written") is None


async def test_every_document_reads_back_as_it_was_written(bank: MemoryBank) -> None:
    """What a copy into another bank reads: each id, and its text, tags, metadata, timestamp and context."""
    assert await bank.document_ids() == []
    writes = [incident_write(rec, severity="high", metadata={"source": "import"}) for rec in (JWT, POOL)]
    await log_incidents(bank, writes)
    assert await bank.document_ids() == sorted(w.document_id for w in writes)
    for write in writes:
        stored = await bank.document(write.document_id)
        assert stored is not None
        assert sorted(stored.tags) == sorted(write.tags)
        assert dataclasses.replace(stored, tags=write.tags) == write
    assert await bank.document("INC-0000-never-written") is None


async def test_replace_updates_the_record(bank: MemoryBank) -> None:
    await log_incident(bank, JWT)
    corrected = IncidentRecord(
        **{**JWT.__dict__, "root_cause": "Key rotation job skipped pods in a draining node pool."}
    )
    await log_incident(bank, corrected)
    found = await bank.recall(query="401 wave after signing key rotation", limit=5)
    assert [r.record for r in found if r.id == JWT.incident_id] == [corrected]


SHARED = "Shared outage note: upstream DNS resolution failures caused elevated error rates."


async def _tagged_bank(bank: MemoryBank) -> None:
    docs = {
        "doc-a": ["service:alpha", "kind:incident"],
        "doc-b": ["service:beta", "kind:incident"],
        "doc-ab": ["service:alpha", "service:beta", "kind:incident"],
        "doc-untagged": [],
    }
    for n, (doc_id, tags) in enumerate(docs.items()):
        await bank.retain(
            document_id=doc_id,
            content=f"{SHARED} Record {doc_id}.",
            tags=tags,
            metadata={"n": str(n)},
            timestamp=T0 + timedelta(hours=n),
        )


@pytest.mark.parametrize(
    ("tags", "mode", "expected"),
    [
        (["service:alpha"], "any", {"doc-a", "doc-ab", "doc-untagged"}),
        (["service:alpha"], "any_strict", {"doc-a", "doc-ab"}),
        (["service:alpha", "service:beta"], "any_strict", {"doc-a", "doc-b", "doc-ab"}),
        (["service:alpha", "service:beta"], "all", {"doc-ab", "doc-untagged"}),
        (["service:alpha", "service:beta"], "all_strict", {"doc-ab"}),
        (["service:alpha", "kind:incident"], "all_strict", {"doc-a", "doc-ab"}),
        (["service:alpha", "kind:incident"], "exact", {"doc-a"}),
        (["service:alpha", "service:beta", "kind:incident"], "exact", {"doc-ab"}),
        (["service:gamma"], "any_strict", set()),
        (["service:gamma"], "any", {"doc-untagged"}),
    ],
)
async def test_tags_match_modes(
    bank: MemoryBank, tags: list[str], mode: TagsMatch, expected: set[str]
) -> None:
    await _tagged_bank(bank)
    found = await bank.recall(
        query="DNS resolution failures error rates", tags=tags, tags_match=mode, budget="high", limit=10
    )
    assert {r.id for r in found} == expected


async def test_no_tags_means_every_record(bank: MemoryBank) -> None:
    await _tagged_bank(bank)
    found = await bank.recall(query="DNS resolution failures error rates", budget="high", limit=10)
    assert {r.id for r in found} == {"doc-a", "doc-b", "doc-ab", "doc-untagged"}


async def test_scoped_versus_cross_service_recall(bank: MemoryBank) -> None:
    for rec in ALL:
        await log_incident(bank, rec)
    alert = "Payment confirmations time out; the card processor returns 429 rate limited"
    scoped = await recall_similar_incidents(bank, alert, service="checkout-service", limit=3)
    assert scoped and {r.record.service for r in scoped if r.record} == {"checkout-service"}
    anywhere = await recall_similar_incidents(bank, alert, limit=3)
    assert anywhere[0].id == RETRY.incident_id


async def test_limit_counts_incidents_not_facts(bank: MemoryBank) -> None:
    for rec in ALL:
        await log_incident(bank, rec)
    found = await bank.recall(
        query="connection pool timeouts rate limits key rotation memory", budget="high", limit=3
    )
    ids = [r.id for r in found]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert await bank.recall(query="connection pool", limit=0) == []


async def test_mental_model_refresh_advances_last_refreshed_at(bank: MemoryBank) -> None:
    for rec in ALL:
        await log_incident(bank, rec)
    created = await bank.create_mental_model(
        model_id="contract-profile", name="Contract profile", source_query="Which failure patterns recur?"
    )
    assert (await wait_operation(bank, created)).status == "completed"
    first = await bank.get_mental_model("contract-profile")
    assert first is not None and first.last_refreshed_at is not None
    refreshed = await bank.refresh_mental_model("contract-profile")
    assert (await wait_operation(bank, refreshed)).status == "completed"
    second = await bank.get_mental_model("contract-profile")
    assert second is not None and second.last_refreshed_at is not None
    assert second.last_refreshed_at > first.last_refreshed_at
    assert "contract-profile" in {m.id for m in await bank.list_mental_models()}


async def test_reflect_answers(bank: MemoryBank) -> None:
    for rec in ALL:
        await log_incident(bank, rec)
    answer = await bank.reflect(
        query="What went wrong with checkout?", tags=["service:checkout-service"], tags_match="any_strict"
    )
    assert answer.text


async def test_bank_config_round_trip_and_health(bank: MemoryBank) -> None:
    config = BankConfig(
        mission="Remember incidents.",
        directives=["Cite sources."],
        dispositions={"skepticism": 4, "literalism": 4, "empathy": 2},
    )
    await bank.configure(config)
    stored = await bank.get_config()
    assert stored.mission == config.mission and stored.directives == config.directives
    assert stored.dispositions["skepticism"] == 4 and stored.dispositions["literalism"] == 4
    health = await bank.health()
    assert health.ok and health.driver == bank.driver


async def test_unavailable_store_raises_memory_unavailable(unavailable_bank: MemoryBank) -> None:
    guard = 10 * UNAVAILABLE_TIMEOUT_S + 30  # a hang fails the test instead of blocking the suite
    with pytest.raises(MemoryUnavailable):
        await asyncio.wait_for(log_incident(unavailable_bank, POOL), timeout=guard)


async def test_unreachable_store_fails_reads_and_reports_unhealthy(unreachable_bank: MemoryBank) -> None:
    guard = 10 * UNAVAILABLE_TIMEOUT_S + 30
    with pytest.raises(MemoryUnavailable):
        await asyncio.wait_for(unreachable_bank.recall(query="pool exhausted"), timeout=guard)
    health = await asyncio.wait_for(unreachable_bank.health(), timeout=guard)
    assert not health.ok and health.driver == unreachable_bank.driver
