"""``recallops bench recall``: recall latency of the embedded bank per size, against its own floor.

For each size the benchmark builds a fresh bank of synthetic incident records and measures, in one run:

- **retain/s**: ``bank.retain`` end to end (embedding with the real model + the SQLite write) for a
  sample of records;
- **reopen**: a new bank instance loading every vector from the file (what a restart costs);
- **recall p50/p95**: ``recall_similar_incidents`` (the agent's tool, query embedding included),
  unscoped and scoped to one service;
- **floor**: the same queries as the raw work alone: one float32 matrix product with ``argpartition``
  plus one FTS5 ``MATCH ... ORDER BY rank`` on the same file (query vector precomputed), and the floor
  plus the query's embedding; measured interleaved with the recalls, query by query.

Embedding every synthetic record would take minutes at 100k, so the bulk of the bank is composed from
a pool of distinct texts embedded once: each record's text is unique (ids, hosts, figures differ), its
vector is its pool text's. The output says how many distinct vectors the bank holds.
"""

import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memory.bank import Recall
from memory.embedded.bank import EmbeddedBank
from memory.embedded.search import candidate_depth, fts_query, match_expression
from memory.embedded.store import Draft
from memory.embedder import Embedder, MiniLMEmbedder
from memory.schema import IncidentRecord, format_record, record_tags
from memory.service import log_incident, recall_similar_incidents
from memory.settings import MemorySettings
from memory.synthesis import EvidenceDigest

SERVICES = [
    "checkout-service", "payment-gateway", "auth-service", "inventory-service", "cart-service",
    "search-service", "order-service", "notification-service", "shipping-service", "api-gateway",
    "catalog-service", "recommendation-service",
]  # fmt: skip
SYMPTOMS = [
    "p99 latency on {endpoint} rose to {n} ms", "error rate on {endpoint} reached {n} %",
    "requests to {endpoint} timed out for {n} minutes", "pods restarted {n} times in an hour",
    "queue depth grew to {n} thousand messages", "{n} % of logins failed",
    "memory usage climbed to {n} % of the limit", "disk usage reached {n} % on data nodes",
]  # fmt: skip
SIGNATURES = [
    "HikariPool-1 - Connection is not available, request timed out after {n}ms",
    "429 Too Many Requests from {dep}", "OOMKilled (exit code 137) in {component}",
    "x509: certificate has expired for {dep}", "JWTVerificationException: kid not found",
    "CommitFailedException: group rebalanced", "SocketTimeoutException: Read timed out calling {dep}",
    "cluster_block_exception: flood-stage watermark exceeded", "FATAL: too many clients already",
    "redis evicted_keys rising on {dep}",
]  # fmt: skip
CAUSES = [
    "connection pool sized for average load, exhausted by a traffic burst",
    "retries without backoff multiplied traffic and the provider rate-limited us",
    "a signing key rotation reached only some pods", "an unbounded cache grew with the catalogue",
    "a missing index made a query hold connections for seconds",
    "a certificate was renewed by hand and expired",
    "a consumer batch took longer than the poll interval", "a schema migration locked a hot table",
    "a TTL change filled the cache until it evicted live keys", "clock skew on a few nodes",
]  # fmt: skip
FIXES = [
    "raised the pool within the database limit and added a circuit breaker",
    "added exponential backoff with jitter and a dead-letter queue", "rolled the key set to every pod",
    "bounded the cache and streamed the sync", "created the index concurrently",
    "moved the certificate to automatic renewal", "lowered the batch size", "added a lock timeout",
    "restored the TTL and raised maxmemory", "restored NTP and drained the skewed nodes",
]  # fmt: skip
ENDPOINTS = ["/checkout", "/cart", "/login", "/search", "/orders", "/payments/confirm", "/inventory/reserve"]
DEPENDENCIES = [
    "postgres-orders",
    "the card processor",
    "redis-carts",
    "elasticsearch",
    "kafka",
    "the SMS provider",
]
COMPONENTS = ["ErpSyncJob", "OrderWorker", "ReservationService", "RecommendationLoader", "CartCache"]
QUERY_COUNT = 100
WARMUP = 10
POOL_SIZE = 1000
RETAIN_SAMPLE = 100
BULK_BATCH = 2000
HINDSIGHT_RECORDS = 100
HINDSIGHT_QUERIES = 30
T0 = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass
class SizeResult:
    size: int
    recall_p50_ms: float
    recall_p95_ms: float
    scoped_p50_ms: float
    scoped_p95_ms: float
    floor_p50_ms: float
    floor_p95_ms: float
    embed_p50_ms: float
    floor_with_embedding_p50_ms: float
    ratio_to_floor: float
    ratio_to_floor_with_embedding: float
    retain_per_s: float
    reopen_s: float
    distinct_vectors: int


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        endpoint=rng.choice(ENDPOINTS),
        n=rng.randint(2, 9000),
        dep=rng.choice(DEPENDENCIES),
        component=rng.choice(COMPONENTS),
    )


def _base_text(rng: random.Random) -> tuple[str, str, str, str, str]:
    service = rng.choice(SERVICES)
    return (
        service,
        _fill(rng.choice(SYMPTOMS), rng),
        _fill(rng.choice(SIGNATURES), rng),
        rng.choice(CAUSES),
        rng.choice(FIXES),
    )


def _record(n: int, base: tuple[str, str, str, str, str], rng: random.Random) -> IncidentRecord:
    service, symptom, signature, cause, fix = base
    return IncidentRecord(
        incident_id=f"SYN-{n:07d}",
        service=service,
        timestamp=T0 + timedelta(minutes=37 * n),
        symptom=f"{symptom} on host {service}-{rng.randint(1, 400)}",
        error_signature=signature,
        root_cause=cause,
        resolution_steps=f"{fix}; ticket OPS-{rng.randint(1000, 99999)}",
        runbook_used=f"RB-{service}",
        outcome=f"resolved after {rng.randint(5, 240)} minutes",
        resolved_by=f"engineer-{rng.randint(1, 60)}",
    )


def _queries(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for _ in range(QUERY_COUNT):
        service, symptom, signature, _, _ = _base_text(rng)
        out.append((f"[FIRING] {service}: {symptom}. Logs show {signature}", service))
    return out


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


async def _timed_recall(bank: Recall, queries: list[tuple[str, str]], scoped: bool) -> list[float]:
    for text, service in queries[:WARMUP]:
        await recall_similar_incidents(bank, text, service=service if scoped else None, limit=3)
    times = []
    for text, service in queries:
        start = time.perf_counter()
        await recall_similar_incidents(bank, text, service=service if scoped else None, limit=3)
        times.append((time.perf_counter() - start) * 1000)
    return times


@dataclass
class Timings:
    unscoped: list[float]
    scoped: list[float]
    embed: list[float]
    floor: list[float]


async def _interleaved(
    path: Path, bank: EmbeddedBank, embedder: Embedder, queries: list[tuple[str, str]]
) -> Timings:
    """Per query, back to back: recall unscoped, recall scoped, then the floor's parts.

    The floor is the raw work recall cannot avoid: embedding the query (timed apart), one matrix product
    with top-k, one FTS5 BM25 top-k over the words the bank keeps. Interleaving keeps a busy machine's
    drift out of the ratio.
    """
    k = candidate_depth("mid", 3)
    matrix = bank.index.snapshot()
    conn = sqlite3.connect(path)
    timings = Timings([], [], [], [])
    try:
        for n, (text, service) in enumerate([*queries[:WARMUP], *queries]):
            start = time.perf_counter()
            await recall_similar_incidents(bank, text, limit=3)
            unscoped = time.perf_counter() - start
            start = time.perf_counter()
            await recall_similar_incidents(bank, text, service=service, limit=3)
            scoped = time.perf_counter() - start
            start = time.perf_counter()
            vector = embedder.embed([text])[0]
            embed = time.perf_counter() - start
            terms = match_expression(bank.keywords.terms(conn, text, size=len(matrix)))
            expression = fts_query(terms) if terms else None
            start = time.perf_counter()
            sims = matrix @ vector
            np.argpartition(-sims, k)[:k]
            conn.execute(
                "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?",
                (expression, k),
            ).fetchall()
            floor = time.perf_counter() - start
            if n >= WARMUP:
                for series, value in zip(
                    (timings.unscoped, timings.scoped, timings.embed, timings.floor),
                    (unscoped, scoped, embed, floor),
                    strict=True,
                ):
                    series.append(value * 1000)
    finally:
        conn.close()
    return timings


async def measure_size(
    size: int,
    embedder: Embedder,
    pool: list[tuple[str, str, str, str, str]],
    pool_vectors: np.ndarray,
    seed: int = 7,
) -> SizeResult:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        settings = MemorySettings(data_dir=Path(tmp), memory_timeout_s=30.0)
        bank = EmbeddedBank(settings, embedder=embedder, synthesizer=EvidenceDigest())
        sample = min(RETAIN_SAMPLE, size)
        start = time.perf_counter()
        for n in range(sample):
            await log_incident(bank, _record(n, pool[n % len(pool)], rng))
        retain_per_s = sample / (time.perf_counter() - start)
        for batch_start in range(sample, size, BULK_BATCH):
            batch = []
            for n in range(batch_start, min(size, batch_start + BULK_BATCH)):
                record = _record(n, pool[n % len(pool)], rng)
                tags = record_tags(record)
                draft = Draft(
                    record.incident_id,
                    format_record(record),
                    tags,
                    {"service": record.service},
                    record.timestamp,
                    None,
                )
                batch.append((draft, pool_vectors[n % len(pool)]))
            await bank.retain_embedded(batch, {})
        await bank.close()

        start = time.perf_counter()
        reopened = EmbeddedBank(settings, embedder=embedder, synthesizer=EvidenceDigest())
        await asyncio.to_thread(reopened._sync)
        reopen_s = time.perf_counter() - start
        try:
            t = await _interleaved(settings.embedded_path, reopened, embedder, _queries(rng))
        finally:
            await reopened.close()
    recall_p50 = statistics.median(t.unscoped)
    floor_p50 = statistics.median(t.floor)
    with_embedding = statistics.median([e + f for e, f in zip(t.embed, t.floor, strict=True)])
    return SizeResult(
        size=size,
        recall_p50_ms=round(recall_p50, 2),
        recall_p95_ms=round(_pct(t.unscoped, 95), 2),
        scoped_p50_ms=round(statistics.median(t.scoped), 2),
        scoped_p95_ms=round(_pct(t.scoped, 95), 2),
        floor_p50_ms=round(floor_p50, 2),
        floor_p95_ms=round(_pct(t.floor, 95), 2),
        embed_p50_ms=round(statistics.median(t.embed), 2),
        floor_with_embedding_p50_ms=round(with_embedding, 2),
        ratio_to_floor=round(recall_p50 / floor_p50, 2),
        ratio_to_floor_with_embedding=round(recall_p50 / with_embedding, 2),
        retain_per_s=round(retain_per_s, 1),
        reopen_s=round(reopen_s, 3),
        distinct_vectors=min(size, len(pool)),
    )


async def run_recall(sizes: list[int], embedder: Embedder | None = None) -> list[dict[str, float | str]]:
    embedder = embedder or MiniLMEmbedder()
    rng = random.Random(11)
    pool = [_base_text(rng) for _ in range(min(POOL_SIZE, max(sizes)))]
    pool_vectors = embedder.embed(
        [format_record(_record(i, base, random.Random(i))) for i, base in enumerate(pool)]
    )
    return [asdict(await measure_size(size, embedder, pool, pool_vectors)) for size in sizes]


async def run_hindsight(url: str, *, records: int = HINDSIGHT_RECORDS) -> dict[str, float | str]:
    """The same small workload against a running Hindsight server: retain/s and recall p50/p95."""
    from memory.hindsight import HindsightBank

    rng = random.Random(7)
    settings = MemorySettings(
        memory="hindsight",
        hindsight_base_url=url,
        bank_id=f"bench-recall-{int(time.time())}",
        memory_timeout_s=60.0,
    )
    bank = HindsightBank(settings)
    try:
        start = time.perf_counter()
        for n in range(records):
            await log_incident(bank, _record(n, _base_text(rng), rng))
        retain_per_s = records / (time.perf_counter() - start)
        queries = _queries(rng)[:HINDSIGHT_QUERIES]
        unscoped = await _timed_recall(bank, queries, scoped=False)
        scoped = await _timed_recall(bank, queries, scoped=True)
    finally:
        await bank.close()
    return {
        "size": records,
        "recall_p50_ms": round(statistics.median(unscoped), 2),
        "recall_p95_ms": round(_pct(unscoped, 95), 2),
        "scoped_p50_ms": round(statistics.median(scoped), 2),
        "scoped_p95_ms": round(_pct(scoped, 95), 2),
        "retain_per_s": round(retain_per_s, 2),
        "driver": "hindsight",
    }


def markdown_table(results: list[dict[str, float | str]]) -> str:
    head = (
        "| size | recall p50 / p95 ms | scoped p50 / p95 ms | floor p50 / p95 ms | query embedding p50 ms "
        "| recall / floor (/ floor + embedding) | retain/s | reopen s | distinct vectors |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in results:
        cells = [
            r["size"],
            f"{r['recall_p50_ms']} / {r['recall_p95_ms']}",
            f"{r['scoped_p50_ms']} / {r['scoped_p95_ms']}",
            f"{r['floor_p50_ms']} / {r['floor_p95_ms']}",
            r["embed_p50_ms"],
            f"{r['ratio_to_floor']} ({r['ratio_to_floor_with_embedding']})",
            r["retain_per_s"],
            r["reopen_s"],
            r["distinct_vectors"],
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines.append(
        f"\n{QUERY_COUNT} queries per size after {WARMUP} warm-up; recall includes embedding the query. "
        f"Bulk records beyond the first {RETAIN_SAMPLE} reuse the vectors of {POOL_SIZE} distinct pool texts."
    )
    return "\n".join(lines)
