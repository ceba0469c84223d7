"""``recallops bench briefing``: from an alert to a stored briefing, evidence-only, on the embedded bank.

The bank is filled with generated incidents (``evals.bench.synthetic``), vectors from the product's
embedder; records of one service and failure mode share one vector unless ``exact`` (see
``build_bank``), while every alert's query is embedded for real. Then, for each alert, the clock
runs over exactly what the worker does for a new incident: the agent's loop (scoped recall,
cross-service recall when thin, assembly, checks) and the versioned write of the briefing with its
timeline line. ``recall_p50_ms`` is the share spent inside the recall tool (from the briefing's own
hop trace). In the same run, after each briefing, two floors: one embedding of an alert's text by the
model alone (which every recall pays once per query), and a bare ``recall_similar_incidents`` call.
Both use alerts of their own, never briefed, so neither reads a vector the bank kept for a briefing.
"""

import asyncio
import random
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from agent.core.evidence import AlertInput
from evals.bench.synthetic import synthetic_alert, synthetic_record
from incidents.database import transaction
from incidents.incident.models import Incident
from incidents.timeutil import utcnow
from memory.embedded.bank import EmbeddedBank
from memory.embedded.store import Draft
from memory.items import record_items
from memory.schema import IncidentRecord, format_record, record_tags
from memory.service import recall_similar_incidents
from web.app.agent import open_agent
from web.app.briefings import store
from web.app.container import Container
from web.app.sandbox import sandbox_settings


@dataclass(frozen=True)
class Result:
    incidents: int
    alerts: int
    p50_ms: float
    p95_ms: float
    recall_p50_ms: float
    recall_call_p50_ms: float
    embed_p50_ms: float  # one query embedded by the model alone: the floor inside every recall
    store_p50_ms: float
    rest_p50_ms: float  # the loop outside recall: assembly, confidence, checks and the head
    build_s: float
    texts_embedded: int
    seen_before: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def build_bank(
    bank: EmbeddedBank, incidents: int, seed: int, *, have: int = 0, exact: bool = False, batch: int = 256
) -> int:
    """Generate ``incidents`` records in a fixed order; the first ``have`` (already stored) are skipped.

    Unless ``exact``, records of one service and failure mode share the vector of the first of them
    (they differ only in hosts, numbers and dates), so a 10k bank builds in minutes on a laptop; the
    stored text and its keyword index are each record's own. Returns how many texts were embedded.
    """
    rng = random.Random(seed)
    records = [synthetic_record(i, rng) for i in range(incidents)]
    shared: dict[tuple[str, str], np.ndarray] = {}
    shared_items: dict[tuple[str, str], np.ndarray] = {}
    embedded = 0
    for start in range(have, incidents, batch):
        chunk = records[start : start + batch]
        texts = [format_record(r) for r in chunk]
        keys = [record_items(r) for r in chunk]
        if exact:
            vectors = list(await asyncio.to_thread(bank.embedder.embed, texts))
            distinct = list(dict.fromkeys(k for ks in keys for k in ks))
            items = dict(zip(distinct, await asyncio.to_thread(bank.embedder.embed, distinct), strict=True))
            embedded += len(texts) + len(distinct)
        else:
            missing = {
                _family(r): text for r, text in zip(chunk, texts, strict=True) if _family(r) not in shared
            }
            if missing:
                fresh = await asyncio.to_thread(bank.embedder.embed, list(missing.values()))
                shared.update(zip(missing, fresh, strict=True))
                embedded += len(missing)
            vectors = [shared[_family(r)] for r in chunk]
            # A family's records share their items' vectors too, item by item (same template).
            for r, ks in zip(chunk, keys, strict=True):
                if _family(r) not in shared_items and ks:
                    shared_items[_family(r)] = await asyncio.to_thread(bank.embedder.embed, ks)
                    embedded += len(ks)
            items = {
                k: v
                for r, ks in zip(chunk, keys, strict=True)
                if _family(r) in shared_items
                for k, v in zip(ks, shared_items[_family(r)], strict=False)
            }
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
        await bank.retain_embedded(list(zip(drafts, vectors, strict=True)), items)
    return embedded


def _family(record: IncidentRecord) -> tuple[str, str]:
    return record.service, record.runbook_used


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
    *,
    incidents: int,
    alerts: int,
    warmup: int = 5,
    seed: int = 7,
    bank_dir: Path | None = None,
    exact: bool = False,
) -> Result:
    with tempfile.TemporaryDirectory(prefix="recallops-bench-") as scratch:
        data_dir = bank_dir or Path(scratch)
        container = Container.build(sandbox_settings(data_dir, llm="evidence-only"))
        try:
            bank = container.bank
            assert isinstance(bank, EmbeddedBank), "the briefing benchmark runs on the embedded bank"
            started = time.perf_counter()
            health = await bank.health()
            embedded = 0
            if (health.documents or 0) < incidents:
                embedded = await build_bank(bank, incidents, seed, have=health.documents or 0, exact=exact)
            build_s = round(time.perf_counter() - started, 1)
            rng = random.Random(seed + 1)
            queries = [synthetic_alert(rng) for _ in range(warmup + alerts)]
            floor_rng = random.Random(seed + 2)
            floor_queries = [synthetic_alert(floor_rng) for _ in queries]
            ids = await asyncio.to_thread(_incident_rows, container, queries)
            totals: list[float] = []
            recalls: list[float] = []
            stores: list[float] = []
            floor: list[float] = []
            embeds: list[float] = []
            seen: dict[str, int] = {}
            async with open_agent(container) as agent:
                for i, (alert, incident_id, other) in enumerate(
                    zip(queries, ids, floor_queries, strict=True)
                ):
                    began = time.perf_counter()
                    briefing = await agent.brief(alert)
                    briefed = time.perf_counter()
                    await asyncio.to_thread(
                        partial(store, container, incident_id=incident_id, briefing=briefing)
                    )
                    ended = time.perf_counter()
                    bare = time.perf_counter()
                    await asyncio.to_thread(bank.embedder.embed, [other.description])
                    embed_ms = (time.perf_counter() - bare) * 1000
                    bare = time.perf_counter()
                    await recall_similar_incidents(bank, other.description, other.service, 5)
                    bare_ms = (time.perf_counter() - bare) * 1000
                    if i < warmup:
                        continue
                    totals.append((ended - began) * 1000)
                    stores.append((ended - briefed) * 1000)
                    floor.append(bare_ms)
                    embeds.append(embed_ms)
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
    rest = [t - r - s for t, r, s in zip(totals, recalls, stores, strict=True)]
    return Result(
        incidents=incidents,
        alerts=alerts,
        p50_ms=_pct(totals, 0.5),
        p95_ms=_pct(totals, 0.95),
        recall_p50_ms=round(statistics.median(recalls), 3),
        recall_call_p50_ms=round(statistics.median(floor), 3),
        embed_p50_ms=round(statistics.median(embeds), 3),
        store_p50_ms=round(statistics.median(stores), 3),
        rest_p50_ms=round(statistics.median(rest), 3),
        build_s=build_s,
        texts_embedded=embedded,
        seen_before=seen,
    )


def summary(result: Result) -> str:
    return (
        f"briefing, evidence-only, embedded bank of {result.incidents} incidents, {result.alerts} alerts\n"
        f"  alert -> stored briefing: p50 {result.p50_ms} ms, p95 {result.p95_ms} ms\n"
        f"  recall inside the loop: p50 {result.recall_p50_ms} ms "
        f"(one bare scoped recall call: p50 {result.recall_call_p50_ms} ms, of which the model embedding "
        f"the query alone: p50 {result.embed_p50_ms} ms)\n"
        f"  storing the briefing: p50 {result.store_p50_ms} ms\n"
        f"  the rest of the loop (assembly, confidence, checks, head): p50 {result.rest_p50_ms} ms\n"
        f"  seen_before: {result.seen_before}; bank built in {result.build_s} s "
        f"({result.texts_embedded} texts embedded)"
    )
