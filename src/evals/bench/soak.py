"""``recallops bench soak``: a bounded alert storm across replicas, resolves mixed in, then an audit.

Senders post Alertmanager webhooks (one alert each, a fingerprint unique to the run) to the replicas in
turn, as a round-robin balancer would, for ``minutes``; every ``resolve_every``-th request instead
resolves the oldest incident the storm opened and has not resolved yet, through the replica whose turn
it is. The storm's services are named after the run, so reruns against the same database never mix.

Afterwards (``evals.bench.soak_audit``) the run is checked through the API: every accepted alert is
stored exactly once, each service has at most one open incident, every incident has exactly one
briefing and every resolved incident reached memory. In the same run, ``GET /healthz`` on each
replica at the same concurrency gives the floor, so alerts/s reads as a share of what the machine,
servers and client can do per request at all.
"""

import asyncio
import itertools
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from evals.bench.ingest import healthz_floor, percentile
from evals.bench.soak_audit import Audit, audit

FLOOR_REQUESTS = 1000
KEEPALIVE_S = 2.0
POST_MORTEM = {
    "symptom": "soak: alert storm on a synthetic service",
    "error_signature": "SoakAlert firing",
    "root_cause": "synthetic load from recallops bench soak",
    "resolution_steps": "Resolved by the soak benchmark",
    "runbook_used": "",
    "outcome": "Resolved",
    "failed_attempts": "",
}


@dataclass
class Ledger:
    """What the storm was told: accepted alerts and their incidents, and what it resolved."""

    accepted: dict[str, str] = field(default_factory=dict)  # fingerprint -> incident
    open: dict[str, None] = field(default_factory=dict)  # incidents not yet resolved, oldest first
    taken: set[str] = field(default_factory=set)  # picked for resolving (the answer may not be back)
    resolved: set[str] = field(default_factory=set)
    alert_ms: list[float] = field(default_factory=list)
    resolve_ms: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    def seen(self, fingerprint: str, incident: str) -> None:
        self.accepted[fingerprint] = incident
        if incident not in self.taken:
            self.open.setdefault(incident, None)

    def take_oldest_open(self) -> str | None:
        incident = next(iter(self.open), None)
        if incident is not None:
            del self.open[incident]
            self.taken.add(incident)
        return incident


@dataclass(frozen=True)
class SoakBench:
    urls: list[str]
    minutes: float
    concurrency: int
    groups: int
    alerts: int
    resolves: int
    errors: int
    error_kinds: dict[str, int]
    seconds: float
    alerts_per_s: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    resolve_p99_ms: float
    floor_rps: dict[str, float]
    audit: Audit

    @property
    def clean(self) -> bool:
        return self.errors == 0 and self.audit.clean

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["clean"] = self.clean
        return data


def service_name(run: str, group: int) -> str:
    return f"soak-{run}-{group}"


def alert_payload(run: str, i: int, groups: int) -> dict[str, Any]:
    """Alert ``i`` of the run: group ``i % groups`` names the service and alert, the fingerprint is unique."""
    group = i % groups
    alert = {
        "status": "firing",
        "labels": {"alertname": "SoakAlert", "service": service_name(run, group), "severity": "warning"},
        "annotations": {"summary": f"soak alert {i} on group {group}"},
        "startsAt": datetime.now(UTC).isoformat(),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "",
        "fingerprint": f"soak-{run}-{i}",
    }
    return {
        "version": "4",
        "status": "firing",
        "receiver": "soak",
        "groupKey": f"soak:{run}:{i}",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://soak",
        "truncatedAlerts": 0,
        "alerts": [alert],
    }


async def _timed_post(
    client: httpx.AsyncClient, ledger: Ledger, what: str, path: str, body: Any, ok: int, times: list[float]
) -> httpx.Response | None:
    """One timed POST: its latency into ``times``; a network error or a status other than ``ok`` is
    counted in the ledger (and ``None`` returned)."""
    started = time.perf_counter()
    try:
        response = await client.post(path, json=body)
    except httpx.HTTPError as exc:
        ledger.error(type(exc).__name__)
        return None
    times.append((time.perf_counter() - started) * 1000)
    if response.status_code != ok:
        ledger.error(f"{what} {response.status_code}")
        return None
    return response


async def _post_alert(client: httpx.AsyncClient, ledger: Ledger, run: str, i: int, groups: int) -> None:
    body = alert_payload(run, i, groups)
    response = await _timed_post(
        client, ledger, "alert", "/api/v1/alerts/alertmanager", body, 200, ledger.alert_ms
    )
    if response is not None:
        for alert in response.json()["alerts"]:
            ledger.seen(alert["fingerprint"], alert["incident"])


async def _resolve(client: httpx.AsyncClient, ledger: Ledger, incident: str) -> None:
    path = f"/api/v1/incidents/{incident}/resolve"
    if await _timed_post(client, ledger, "resolve", path, POST_MORTEM, 201, ledger.resolve_ms) is not None:
        ledger.resolved.add(incident)


async def storm(
    clients: list[httpx.AsyncClient],
    *,
    run: str,
    seconds: float,
    concurrency: int,
    groups: int,
    resolve_every: int,
) -> tuple[Ledger, float]:
    """Post to the replicas in turn until ``seconds`` have passed; returns the ledger and the duration."""
    ledger = Ledger()
    counter = itertools.count()
    started = time.perf_counter()
    deadline = started + seconds

    async def sender() -> None:
        while time.perf_counter() < deadline:
            i = next(counter)
            client = clients[i % len(clients)]
            if i % resolve_every == resolve_every - 1 and (incident := ledger.take_oldest_open()):
                await _resolve(client, ledger, incident)
            else:
                await _post_alert(client, ledger, run, i, groups)

    await asyncio.gather(*(sender() for _ in range(concurrency)))
    return ledger, time.perf_counter() - started


async def run_soak(
    urls: list[str],
    token: str,
    *,
    minutes: float,
    concurrency: int = 8,
    groups: int = 20,
    resolve_every: int = 50,
    drain_timeout_s: float = 600.0,
) -> SoakBench:
    run = secrets.token_hex(4)
    headers = {"Authorization": f"Bearer {token}"}
    # Idle connections are dropped before uvicorn's 5 s keep-alive would close them under a request.
    limits = httpx.Limits(max_connections=concurrency, keepalive_expiry=KEEPALIVE_S)
    clients = [httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30.0) for url in urls]
    try:
        floor = {}
        for url, client in zip(urls, clients, strict=True):
            floor[url] = round(await healthz_floor(client, concurrency, FLOOR_REQUESTS), 1)
        ledger, seconds = await storm(
            clients,
            run=run,
            seconds=minutes * 60,
            concurrency=concurrency,
            groups=groups,
            resolve_every=resolve_every,
        )
        checked = await audit(
            clients[0],
            accepted=ledger.accepted,
            resolved=ledger.resolved,
            services=[service_name(run, group) for group in range(groups)],
            drain_timeout_s=drain_timeout_s,
        )
    finally:
        for client in clients:
            await client.aclose()
    alert_ms = sorted(ledger.alert_ms) or [0.0]
    return SoakBench(
        urls=urls,
        minutes=minutes,
        concurrency=concurrency,
        groups=groups,
        alerts=len(ledger.accepted),
        resolves=len(ledger.resolved),
        errors=ledger.errors,
        error_kinds=ledger.error_kinds,
        seconds=round(seconds, 1),
        alerts_per_s=round(len(ledger.accepted) / seconds, 1),
        p50_ms=round(percentile(alert_ms, 50), 1),
        p95_ms=round(percentile(alert_ms, 95), 1),
        p99_ms=round(percentile(alert_ms, 99), 1),
        resolve_p99_ms=round(percentile(sorted(ledger.resolve_ms) or [0.0], 99), 1),
        floor_rps=floor,
        audit=checked,
    )


def summary(result: SoakBench) -> str:
    audit = result.audit
    floors = ", ".join(f"{url} {rps:.0f} req/s" for url, rps in result.floor_rps.items())
    verdict = "clean" if result.clean else "NOT CLEAN"
    return (
        f"soak over {len(result.urls)} replicas, {result.seconds:.0f}s at concurrency {result.concurrency}: "
        f"{result.alerts} alerts accepted ({result.alerts_per_s:.1f}/s), {result.resolves} resolves, "
        f"{result.errors} errors {result.error_kinds or ''}\n"
        f"alert ack latency p50 {result.p50_ms:.1f} ms, p95 {result.p95_ms:.1f} ms, "
        f"p99 {result.p99_ms:.1f} ms; resolve p99 {result.resolve_p99_ms:.1f} ms\n"
        f"audit ({audit.incidents} incidents, drained in {audit.drain_s:.1f}s): lost {audit.lost}, "
        f"duplicated {audit.duplicated}, extra open incidents {audit.extra_open_incidents}, "
        f"briefings missing {audit.briefings_missing} / duplicated {audit.briefings_duplicated}, "
        f"memory unsynced {audit.memory_unsynced}, unverifiable {audit.unverifiable}\n"
        f"floor: GET /healthz {floors} at the same concurrency\n"
        f"verdict: {verdict}"
    )
