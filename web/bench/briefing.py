"""``recallops bench briefing``: from an alert to a stored briefing, evidence-only, on the embedded bank.

The bank is filled with generated incidents (services x failure modes, each record worded with its
own hosts, numbers and details, so no two are the same text), vectors computed in batches by the
product's embedder. Then, for each alert, the clock runs over exactly what the worker does for a new
incident: the agent's loop (scoped recall, cross-service recall when thin, assembly, checks) and the
versioned write of the briefing with its timeline line. ``recall_ms`` is the share spent inside the
recall tool (from the briefing's own hop trace). In the same run, a bare ``recall_similar_incidents``
call gives the floor the loop is compared with.
"""

import asyncio
import random
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agent.evidence import AlertInput
from incidents.database import transaction
from incidents.incident.models import Incident
from incidents.timeutil import utcnow
from memory.embedded.bank import EmbeddedBank
from memory.embedded.store import Draft
from memory.schema import IncidentRecord, format_record, record_tags
from memory.tools import recall_similar_incidents
from web.briefings import open_agent, store
from web.container import Container
from web.sandbox import sandbox_settings

SERVICES = (
    "checkout-service",
    "payment-gateway",
    "auth-service",
    "inventory-service",
    "search-api",
    "cart-service",
    "order-service",
    "shipping-service",
    "notification-service",
    "pricing-service",
    "catalog-service",
    "recommendation-api",
    "user-profile",
    "fraud-detection",
    "ledger-service",
    "media-cdn",
    "gateway-edge",
    "reporting-etl",
    "loyalty-service",
    "tax-service",
)
# (symptom, error signature, root cause, resolution steps, runbook, failed attempts); {n} {host} {dep} vary.
MODES = (
    (
        "p99 latency over {n} s and 5xx on writes",
        "FATAL: remaining connection slots are reserved ({dep})",
        "connection pool sized for average load, exhausted by a traffic burst",
        "Checked pg_stat_activity on {host}; raised the pool to {n}0; added a circuit breaker",
        "runbooks/db-pool.md",
        "Adding replicas without checking max_connections made it worse",
    ),
    (
        "upstream confirmations timing out",
        "HTTP 429 Too Many Requests from {dep}",
        "retries without backoff tripped the provider's rate limit",
        "Added exponential backoff with jitter; moved failures to a dead-letter queue",
        "runbooks/rate-limits.md",
        "Raising the retry count amplified the 429 storm",
    ),
    (
        "wave of 401s after a deploy",
        "JWT signature verification failed (kid={n})",
        "signing key rotation reached only some pods",
        "Rolled the new key to every pod on {host}; verified JWKS",
        "runbooks/jwt-rotation.md",
        "Restarting the gateway alone did not help",
    ),
    (
        "pods OOMKilled during the nightly job",
        "OOMKilled exit code 137 on {host}",
        "the batch loads the whole dataset in memory",
        "Streamed the job in batches of {n}00; raised the limit",
        "runbooks/oom.md",
        "Doubling replicas only multiplied the kills",
    ),
    (
        "disk full on the primary",
        "No space left on device: /var/lib/{dep}",
        "log rotation disabled after an image change",
        "Re-enabled logrotate; pruned {n} GB of old WAL",
        "runbooks/disk-full.md",
        "Deleting files by hand removed the live WAL segment",
    ),
    (
        "TLS handshakes failing for clients",
        "x509: certificate has expired ({dep})",
        "certificate renewal job silently failed",
        "Renewed the certificate; alert on expiry {n} days ahead",
        "runbooks/certificates.md",
        "Pinning the old certificate broke mobile clients",
    ),
    (
        "queue depth growing without bound",
        "consumer lag {n}0000 messages on {dep}",
        "a poison message crashed the consumer in a loop",
        "Moved the poison message to a DLQ; added a retry cap",
        "runbooks/queue-lag.md",
        "Scaling consumers made the crash loop faster",
    ),
    (
        "DNS lookups timing out",
        "dial tcp: lookup {dep}: i/o timeout",
        "CoreDNS pods throttled on CPU",
        "Raised the CoreDNS CPU limit; added node-local DNS cache on {host}",
        "runbooks/dns.md",
        "Restarting every pod at once caused a thundering herd",
    ),
    (
        "cache hit ratio collapsed, database overloaded",
        "redis: connection refused {host}:6379",
        "cache node evicted after a failover",
        "Promoted the replica; warmed the cache for the top {n}00 keys",
        "runbooks/cache.md",
        "Flushing the cache doubled the database load",
    ),
    (
        "config push broke request routing",
        "upstream connect error or disconnect/reset before headers ({dep})",
        "a bad routing rule was pushed to every edge at once",
        "Rolled back the config; added a canary stage",
        "runbooks/config-rollback.md",
        "Hot-patching the rule by hand pushed a second bad version",
    ),
    (
        "clock skew broke token validation",
        "token used before issued (skew {n} s)",
        "NTP daemon stopped on {host}",
        "Restarted chronyd; alert on skew over 1 s",
        "runbooks/ntp.md",
        "Widening the allowed skew hid a replay attack window",
    ),
    (
        "deadlocks on order writes",
        "ERROR: deadlock detected (SQLSTATE 40P01) on {dep}",
        "two code paths lock rows in opposite order",
        "Made both paths lock in id order; retried on 40P01",
        "runbooks/deadlocks.md",
        "Raising lock_timeout made requests hang longer",
    ),
)
DEPS = ("orders-db", "payments-db", "stripe", "adyen", "kafka", "rabbitmq", "redis", "users-db", "s3")


@dataclass(frozen=True)
class Result:
    incidents: int
    alerts: int
    p50_ms: float
    p95_ms: float
    recall_p50_ms: float
    recall_call_p50_ms: float
    store_p50_ms: float
    build_s: float
    seen_before: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _fill(template: str, rng: random.Random) -> str:
    host = f"{rng.choice(('db', 'app', 'node', 'edge'))}-{rng.randint(1, 999):03d}"
    return template.format(n=rng.randint(2, 9), host=host, dep=rng.choice(DEPS))


def synthetic_record(index: int, rng: random.Random) -> IncidentRecord:
    symptom, signature, cause, steps, runbook, failed = rng.choice(MODES)
    service = rng.choice(SERVICES)
    return IncidentRecord(
        incident_id=f"SYN-{index:06d}",
        service=service,
        timestamp=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 1_000_000)),
        symptom=f"{service}: {_fill(symptom, rng)}",
        error_signature=_fill(signature, rng),
        root_cause=_fill(cause, rng),
        resolution_steps=_fill(steps, rng),
        runbook_used=runbook,
        outcome=f"Recovered after {rng.randint(5, 90)} minutes",
        failed_attempts=_fill(failed, rng) if rng.random() < 0.7 else "",
        resolved_by=rng.choice(("dana", "lee", "sam", "kim", "ari")),
    )


def synthetic_alert(rng: random.Random) -> AlertInput:
    symptom, signature, *_ = rng.choice(MODES)
    service = rng.choice(SERVICES)
    return AlertInput(
        text=f"{_fill(signature, rng)}; {_fill(symptom, rng)}", service=service, title=f"{service} alert"
    )


async def build_bank(
    bank: EmbeddedBank, incidents: int, seed: int, *, have: int = 0, batch: int = 256
) -> None:
    """Generate ``incidents`` records in a fixed order; the first ``have`` (already stored) are skipped."""
    rng = random.Random(seed)
    records = [synthetic_record(i, rng) for i in range(incidents)]
    for start in range(have, incidents, batch):
        chunk = records[start : start + batch]
        texts = [format_record(r) for r in chunk]
        vectors = await asyncio.to_thread(bank.embedder.embed, texts)
        drafts = [
            Draft(
                r.incident_id,
                text,
                record_tags(r),
                {"incident_id": r.incident_id, "service": r.service},
                r.timestamp,
                None,
            )
            for r, text in zip(chunk, texts, strict=True)
        ]
        await bank.retain_many(list(zip(drafts, vectors, strict=True)))


def _incident_rows(container: Container, alerts: list[AlertInput]) -> list[int]:
    now = utcnow()
    run = uuid.uuid4().hex[:8]
    with transaction(container.sessions) as db:
        rows = [
            Incident(
                public_id=f"BENCH-{run}-{i:05d}",
                title=a.title,
                service=a.service or "unknown",
                alertname="bench",
                severity="critical",
                status="triggered",
                origin="seed",
                first_seen=now,
                last_seen=now,
            )
            for i, a in enumerate(alerts)
        ]
        db.add_all(rows)
        db.flush()
        return [row.id for row in rows]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 3)


async def run_briefing_bench(
    *, incidents: int, alerts: int, warmup: int = 5, seed: int = 7, bank_dir: Path | None = None
) -> Result:
    with tempfile.TemporaryDirectory(prefix="recallops-bench-") as scratch:
        data_dir = bank_dir or Path(scratch)
        container = Container.build(sandbox_settings(data_dir, llm="evidence-only"))
        try:
            bank = container.bank
            assert isinstance(bank, EmbeddedBank), "the briefing benchmark runs on the embedded bank"
            started = time.perf_counter()
            health = await bank.health()
            if (health.documents or 0) < incidents:
                await build_bank(bank, incidents, seed, have=health.documents or 0)
            build_s = round(time.perf_counter() - started, 1)
            rng = random.Random(seed + 1)
            queries = [synthetic_alert(rng) for _ in range(warmup + alerts)]
            ids = await asyncio.to_thread(_incident_rows, container, queries)
            totals: list[float] = []
            recalls: list[float] = []
            stores: list[float] = []
            floor: list[float] = []
            seen: dict[str, int] = {}
            async with open_agent(container) as agent:
                for i, (alert, incident_id) in enumerate(zip(queries, ids, strict=True)):
                    began = time.perf_counter()
                    briefing = await agent.brief(alert)
                    briefed = time.perf_counter()
                    await asyncio.to_thread(
                        lambda b=briefing, n=incident_id: store(container, incident_id=n, briefing=b)
                    )
                    ended = time.perf_counter()
                    bare = time.perf_counter()
                    await recall_similar_incidents(bank, alert.description, alert.service, 5)
                    bare_ms = (time.perf_counter() - bare) * 1000
                    if i < warmup:
                        continue
                    totals.append((ended - began) * 1000)
                    stores.append((ended - briefed) * 1000)
                    floor.append(bare_ms)
                    recalls.append(
                        sum(
                            c.duration_ms
                            for h in briefing.hops
                            for c in h.calls
                            if c.tool == "recall_similar_incidents"
                        )
                    )
                    seen[briefing.seen_before] = seen.get(briefing.seen_before, 0) + 1
        finally:
            await container.aclose()
    return Result(
        incidents=incidents,
        alerts=alerts,
        p50_ms=_pct(totals, 0.5),
        p95_ms=_pct(totals, 0.95),
        recall_p50_ms=round(statistics.median(recalls), 3),
        recall_call_p50_ms=round(statistics.median(floor), 3),
        store_p50_ms=round(statistics.median(stores), 3),
        build_s=build_s,
        seen_before=seen,
    )


def summary(result: Result) -> str:
    return (
        f"briefing, evidence-only, embedded bank of {result.incidents} incidents, {result.alerts} alerts\n"
        f"  alert -> stored briefing: p50 {result.p50_ms} ms, p95 {result.p95_ms} ms\n"
        f"  recall inside the loop: p50 {result.recall_p50_ms} ms "
        f"(one bare scoped recall call: p50 {result.recall_call_p50_ms} ms)\n"
        f"  storing the briefing: p50 {result.store_p50_ms} ms\n"
        f"  seen_before: {result.seen_before}; bank built in {result.build_s} s"
    )
