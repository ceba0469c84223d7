"""``recallops bench import-health``: does a large import hold up ``/healthz`` on a running server?

Each run first probes ``GET /healthz`` alone for as many requests as the import will be probed for
(the baseline, same server, same client, same run), then posts one import to
``POST /api/v1/memory/import`` and probes ``/healthz`` one request at a time until the import answers.
The body is either junk (one-character lines, every one of them rejected: the parser's whole cost and
nothing else) or generated post-mortems (``evals.bench.synthetic``), which also stores and embeds
them. Figures are per run and the median over runs; a probe's time is the client's, so it counts
waiting for the server's event loop as well as the answer.
"""

import asyncio
import json
import random
import secrets
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

import httpx

from evals.bench.ingest import percentile
from evals.bench.synthetic import synthetic_record
from memory.template import FIELDS

Body = Literal["junk", "records"]
PROBE_GAP_S = 0.01  # between probes: the probe should measure the server, not load it


@dataclass(frozen=True)
class Run:
    import_s: float
    status: int
    probes: int
    baseline_p50_ms: float
    baseline_p99_ms: float
    during_p50_ms: float
    during_p99_ms: float
    during_max_ms: float


@dataclass(frozen=True)
class ImportHealthResult:
    body: Body
    body_bytes: int
    lines: int
    runs: list[Run]

    def _median(self, name: str) -> float:
        return round(statistics.median(float(getattr(r, name)) for r in self.runs), 1)

    def as_dict(self) -> dict[str, Any]:
        medians = {
            name: self._median(name)
            for name in ("import_s", "baseline_p50_ms", "baseline_p99_ms", "during_p50_ms", "during_p99_ms")
        }
        return {
            "body": self.body,
            "body_bytes": self.body_bytes,
            "lines": self.lines,
            "median": medians,
            "runs": [asdict(r) for r in self.runs],
        }


def junk_body(size: int) -> bytes:
    """``size`` bytes of one-character lines: every line is valid JSON and no line is a record."""
    return b"1\n" * (size // 2)


def records_body(size: int, seed: int = 5) -> bytes:
    """Generated post-mortems, one JSON line each, up to ``size`` bytes; fresh ids on every call."""
    rng = random.Random(seed)
    run = secrets.token_hex(3)
    lines: list[bytes] = []
    total = 0
    while total < size:
        record = synthetic_record(len(lines), rng)
        item: dict[str, object] = {f.name: getattr(record, f.name) for f in FIELDS}
        item["timestamp"] = record.timestamp.isoformat()
        item |= {"incident_id": f"{record.incident_id}-{run}", "service": record.service}
        line = json.dumps(item).encode() + b"\n"
        lines.append(line)
        total += len(line)
    return b"".join(lines)


async def _probe(client: httpx.AsyncClient) -> float:
    started = time.perf_counter()
    (await client.get("/healthz")).raise_for_status()
    return (time.perf_counter() - started) * 1000


async def _probe_while(client: httpx.AsyncClient, busy: asyncio.Task[httpx.Response]) -> list[float]:
    times: list[float] = []
    while not busy.done():
        times.append(await _probe(client))
        await asyncio.sleep(PROBE_GAP_S)
    return times


async def _probe_count(client: httpx.AsyncClient, count: int) -> list[float]:
    times: list[float] = []
    for _ in range(count):
        times.append(await _probe(client))
        await asyncio.sleep(PROBE_GAP_S)
    return times


async def _one_run(client: httpx.AsyncClient, body: bytes, baseline_probes: int) -> Run:
    baseline = await _probe_count(client, baseline_probes)
    started = time.perf_counter()
    post = client.post(
        "/api/v1/memory/import", content=body, headers={"Content-Type": "application/x-ndjson"}
    )
    busy = asyncio.ensure_future(post)
    during = await _probe_while(client, busy)
    answer = await busy
    import_s = time.perf_counter() - started
    if answer.status_code != 200:
        raise RuntimeError(f"the import answered {answer.status_code}: {answer.text[:200]}")
    during = during or [await _probe(client)]
    return Run(
        import_s=round(import_s, 2),
        status=answer.status_code,
        probes=len(during),
        baseline_p50_ms=round(percentile(baseline, 50), 2),
        baseline_p99_ms=round(percentile(baseline, 99), 2),
        during_p50_ms=round(percentile(during, 50), 2),
        during_p99_ms=round(percentile(during, 99), 2),
        during_max_ms=round(max(during), 2),
    )


async def run_import_health(
    url: str, token: str, *, body: Body = "junk", mib: float = 2.0, runs: int = 3
) -> ImportHealthResult:
    size = int(mib * 1024 * 1024)
    headers = {"Authorization": f"Bearer {token}"}
    results: list[Run] = []
    probes = 200  # the first run's baseline; later ones match the previous run's probe count
    lines = 0
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=600.0) as client:
        for _ in range(runs):
            content = junk_body(size) if body == "junk" else records_body(size)
            lines = content.count(b"\n")
            run = await _one_run(client, content, probes)
            probes = max(50, run.probes)
            results.append(run)
    return ImportHealthResult(body=body, body_bytes=size, lines=lines, runs=results)


def summary(result: ImportHealthResult) -> str:
    median = result.as_dict()["median"]
    rows = "\n".join(
        f"  run {n}: import {r.import_s:.2f}s, /healthz p50 {r.during_p50_ms:.1f} ms p99 "
        f"{r.during_p99_ms:.1f} ms max {r.during_max_ms:.1f} ms over {r.probes} probes "
        f"(alone: p50 {r.baseline_p50_ms:.1f} ms p99 {r.baseline_p99_ms:.1f} ms)"
        for n, r in enumerate(result.runs, start=1)
    )
    return (
        f"{result.body} import of {result.body_bytes / 2**20:.2f} MiB ({result.lines} lines), "
        f"{len(result.runs)} runs:\n{rows}\n"
        f"median: /healthz during the import p50 {median['during_p50_ms']} ms, "
        f"p99 {median['during_p99_ms']} ms; alone p50 {median['baseline_p50_ms']} ms, "
        f"p99 {median['baseline_p99_ms']} ms; import {median['import_s']} s"
    )
