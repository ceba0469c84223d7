"""``recallops bench ingest``: alert intake throughput and acknowledgement latency over real HTTP.

Posts Alertmanager webhook payloads (one alert each, the costliest shape per alert) to a running
server: unique fingerprints spread over a few service/alert-name groups, so most alerts join an open
incident and some open new ones, as in a real alert storm. Two modes:

- closed loop (default): ``concurrency`` senders post back to back; gives alerts/s.
- paced (``rate``): alert i is due at i/rate s, sent by the next free one of ``concurrency``
  senders; latency is counted from the moment each alert was due, so a server falling behind
  shows up in p99 instead of silently slowing the schedule.

In the same run, the same client measures ``GET /healthz`` at the same concurrency: the floor of
what this machine, server and client can do per request, so the figure reads as a ratio. On a
machine shared with other work both rates move with its load, so the server's own CPU time per
request (``process_cpu_seconds_total`` from its ``/metrics``, read before and after each phase) is
reported beside them: the CPU an alert costs against the CPU a ``/healthz`` costs, which other
processes barely move.
"""

import asyncio
import secrets
import statistics
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

GROUPS = 20
FLOOR_REQUESTS = 2000


@dataclass(frozen=True)
class IngestBench:
    alerts: int
    per_payload: int
    concurrency: int
    rate: float | None
    errors: int
    seconds: float
    alerts_per_s: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    floor_rps: float
    cpu_ms_per_alert: float | None = None  # the server's CPU time per alert; None without /metrics
    floor_cpu_ms: float | None = None  # ... per /healthz request

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _alert(run: str, i: int) -> dict[str, Any]:
    group = i % GROUPS
    labels = {
        "alertname": f"BenchAlert{group}",
        "service": f"bench-{group}",
        "severity": "warning",
        "n": str(i),
    }
    return {
        "status": "firing",
        "labels": labels,
        "annotations": {"summary": f"bench alert {i}"},
        "startsAt": datetime.now(UTC).isoformat(),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "",
        "fingerprint": f"{run}-{i}",
    }


def payload(run: str, first: int, count: int = 1) -> dict[str, Any]:
    """An Alertmanager webhook carrying alerts ``first`` .. ``first + count - 1``."""
    return {
        "version": "4",
        "status": "firing",
        "receiver": "bench",
        "groupKey": f"bench:{run}:{first}",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://bench",
        "truncatedAlerts": 0,
        "alerts": [_alert(run, i) for i in range(first, first + count)],
    }


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (1-99) of the values, interpolated."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def healthz_floor(client: httpx.AsyncClient, concurrency: int, requests: int) -> float:
    """GET /healthz ``requests`` times from ``concurrency`` workers: requests per second."""
    remaining = iter(range(requests))

    async def worker() -> None:
        for _ in remaining:
            (await client.get("/healthz")).raise_for_status()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return requests / (time.perf_counter() - started)


async def server_cpu_s(client: httpx.AsyncClient) -> float | None:
    """The server process's CPU seconds so far, or ``None`` when its ``/metrics`` is closed or lacks them."""
    response = await client.get("/metrics")
    if response.status_code != 200:
        return None
    for family in text_string_to_metric_families(response.text):
        if family.name == "process_cpu_seconds":
            return float(family.samples[0].value)
    return None


def _cpu_ms(before: float | None, after: float | None, requests: int) -> float | None:
    return None if before is None or after is None else round((after - before) * 1000 / requests, 3)


async def _send_all(
    client: httpx.AsyncClient, bodies: list[dict[str, Any]], concurrency: int, rate: float | None
) -> tuple[list[float], int]:
    """``concurrency`` senders take the payloads in order. Closed loop (``rate`` None): each sends as
    soon as it is free. Paced: payload i is due at start + i/rate and its latency counts from then,
    so waiting for a free sender (the server falling behind) is not hidden."""
    latencies: list[float] = []
    errors = 0
    schedule = iter(enumerate(bodies))
    start = time.perf_counter()

    async def sender() -> None:
        nonlocal errors
        for i, body in schedule:
            due = time.perf_counter() if rate is None else start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            response = await client.post("/api/v1/alerts/alertmanager", json=body)
            latencies.append(time.perf_counter() - due)
            errors += response.status_code != 200

    await asyncio.gather(*(sender() for _ in range(concurrency)))
    return latencies, errors


async def run_ingest(
    url: str, token: str, *, alerts: int, concurrency: int, rate: float | None = None, per_payload: int = 1
) -> IngestBench:
    run = secrets.token_hex(4)  # fresh fingerprints, so a rerun against the same server is not all duplicates
    bodies = [payload(run, i, min(per_payload, alerts - i)) for i in range(0, alerts, per_payload)]
    limits = httpx.Limits(max_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30.0) as client:
        probe = await client.post("/api/v1/alerts/alertmanager", json=payload(run, alerts + per_payload))
        if probe.status_code != 200:
            raise RuntimeError(f"server refused a benchmark alert: {probe.status_code} {probe.text[:200]}")
        cpu_before_floor = await server_cpu_s(client)
        floor_rps = await healthz_floor(client, concurrency, FLOOR_REQUESTS)
        cpu_before = await server_cpu_s(client)
        started = time.perf_counter()
        payload_rate = rate / per_payload if rate else None
        latencies, errors = await _send_all(client, bodies, concurrency, payload_rate)
        seconds = time.perf_counter() - started
        cpu_after = await server_cpu_s(client)
    ms = sorted(latency * 1000 for latency in latencies)
    return IngestBench(
        alerts=alerts,
        per_payload=per_payload,
        concurrency=concurrency,
        rate=rate,
        errors=errors,
        seconds=round(seconds, 3),
        alerts_per_s=round(alerts / seconds, 1),
        p50_ms=round(percentile(ms, 50), 2),
        p95_ms=round(percentile(ms, 95), 2),
        p99_ms=round(percentile(ms, 99), 2),
        floor_rps=round(floor_rps, 1),
        cpu_ms_per_alert=_cpu_ms(cpu_before, cpu_after, alerts),
        floor_cpu_ms=_cpu_ms(cpu_before_floor, cpu_before, FLOOR_REQUESTS),
    )


def summary(result: IngestBench) -> str:
    mode = f"paced at {result.rate:g}/s" if result.rate else f"concurrency {result.concurrency}"
    mode += f", {result.per_payload} per payload" if result.per_payload > 1 else ""
    ratio = result.alerts_per_s / result.floor_rps if result.floor_rps else 0.0
    return (
        f"{result.alerts} alerts ({mode}) in {result.seconds:.2f}s: {result.alerts_per_s:.1f} alerts/s, "
        f"ack latency p50 {result.p50_ms:.1f} ms, p95 {result.p95_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, "
        f"errors {result.errors}\n"
        f"floor: GET /healthz {result.floor_rps:.1f} req/s at the same concurrency "
        f"(intake runs at {ratio:.0%} of it)" + _cpu_summary(result)
    )


def _cpu_summary(result: IngestBench) -> str:
    if result.cpu_ms_per_alert is None or not result.floor_cpu_ms:
        return ""
    return (
        f"\nserver CPU: {result.cpu_ms_per_alert:.2f} ms per alert, "
        f"{result.floor_cpu_ms:.2f} ms per /healthz "
        f"(an alert costs {result.cpu_ms_per_alert / result.floor_cpu_ms:.1f}× a /healthz)"
    )
