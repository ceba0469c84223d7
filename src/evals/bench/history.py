"""``recallops bench history``: importing post-mortems, records/s, against embedding the same texts alone.

Generated post-mortems (``evals.bench.synthetic``, each worded with its own hosts and numbers) are
imported through ``import_history``, the path of ``recallops import``: validated rows, the incident
store (SQLite) and the embedded memory bank with the real embedder, records and their items. The floor
is the embedder alone on the same record texts in batches of the same size, measured in the same
run: memory cannot be filled faster than its texts can be embedded, so the ratio says what the rest of
the import costs on top. ``projected_10k_s`` is the time 10,000 records would take at the same rate.
"""

import asyncio
import random
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evals.bench.synthetic import synthetic_record
from memory.service import HistoryRow, Rejections, format_record, validate_items
from memory.template import FIELDS
from web.app.container import Container
from web.app.history import IMPORT_BATCH, import_history
from web.app.sandbox import sandbox_settings


@dataclass(frozen=True)
class HistoryResult:
    records: int
    seconds: float
    records_per_s: float
    embed_floor_records_per_s: float
    ratio_to_floor: float
    projected_10k_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rows(records: int, seed: int) -> list[tuple[int, HistoryRow]]:
    rng = random.Random(seed)
    items = []
    for n in range(records):
        record = synthetic_record(n, rng)
        item: dict[str, object] = {f.name: getattr(record, f.name) for f in FIELDS}
        item |= {"incident_id": record.incident_id, "service": record.service, "severity": "high"}
        items.append((n + 1, item))
    rejections = Rejections()
    rows = validate_items(items, rejections)
    if rejections.count:
        raise ValueError(f"generated rows were rejected: {rejections.shown()[0].reasons}")
    return rows


async def run_history_bench(*, records: int = 1000, seed: int = 11) -> HistoryResult:
    rows = _rows(records, seed)
    with tempfile.TemporaryDirectory(prefix="recallops-history-") as tmp:
        container = Container.build(sandbox_settings(Path(tmp)))
        try:
            texts = [format_record(row.record()) for _, row in rows]
            await asyncio.to_thread(container.embedder.embed, texts[:8])  # load the model: not timed
            started = time.perf_counter()
            for start in range(0, len(texts), IMPORT_BATCH):
                await asyncio.to_thread(container.embedder.embed, texts[start : start + IMPORT_BATCH])
            floor_s = time.perf_counter() - started
            started = time.perf_counter()
            summary = await import_history(
                sessions=container.sessions, bank=container.bank, rows=rows, origin="import", actor="bench"
            )
            seconds = time.perf_counter() - started
        finally:
            await container.aclose()
    if summary.imported != records:
        raise RuntimeError(f"imported {summary.imported} of {records} records: {summary.rejected[:1]}")
    rate = records / seconds
    return HistoryResult(
        records=records,
        seconds=round(seconds, 1),
        records_per_s=round(rate, 1),
        embed_floor_records_per_s=round(records / floor_s, 1),
        ratio_to_floor=round(rate / (records / floor_s), 2),
        projected_10k_s=round(10_000 / rate),
    )


def summary(result: HistoryResult) -> str:
    return (
        f"Imported {result.records} post-mortems in {result.seconds} s: {result.records_per_s} records/s "
        f"({result.ratio_to_floor}× the embedder alone on the same texts, "
        f"{result.embed_floor_records_per_s}/s); "
        f"10,000 would take about {result.projected_10k_s} s."
    )
