"""``recallops bench pages``: how long each page takes to render with ``incidents`` incidents stored.

A throwaway data directory is filled through the product's own services: ``incidents`` alerts each
open an incident (one alert name per incident), three in four are resolved with a post-mortem, and
every incident carries a briefing made by the real agent in evidence-only mode over a bank of
generated records (``evals.bench.synthetic``). The team profile is refreshed once. Then an engineer
signs in and each page is requested ``runs`` times in process (the app, its middleware, database and
memory, no network), after warm-up. ``/healthz`` in the same run is the floor: the cost of a request
that renders nothing.
"""

import random
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update

from evals.bench.briefing import build_bank
from evals.bench.synthetic import synthetic_alert, synthetic_record
from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.service import ingest
from incidents.auth import users
from incidents.briefings import service as briefing_service
from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.incident import service as incident_service
from incidents.resolution import service as resolution_service
from incidents.resolution.models import ResolutionFields
from incidents.timeutil import utcnow
from memory.embedded.bank import EmbeddedBank
from web.app import profile
from web.app.agent import open_agent
from web.app.container import Container
from web.app.sandbox import sandbox_settings
from web.http.app import create_app

PASSWORD = "bench password, not secret"
BATCH = 100
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass(frozen=True)
class Timing:
    page: str
    path: str
    p50_ms: float
    p95_ms: float
    bytes: int


@dataclass(frozen=True)
class Result:
    incidents: int
    runs: int
    bank_records: int
    build_s: float
    pages: list[Timing]
    floor: Timing

    def as_dict(self) -> dict[str, Any]:
        return {
            "incidents": self.incidents,
            "runs": self.runs,
            "bank_records": self.bank_records,
            "build_s": self.build_s,
            "floor_p50_ms": self.floor.p50_ms,
            "pages": {
                t.page: {"path": t.path, "p50_ms": t.p50_ms, "p95_ms": t.p95_ms, "bytes": t.bytes}
                for t in self.pages
            },
        }


def _alerts(count: int, rng: random.Random) -> list[NormalizedAlert]:
    now = utcnow()
    alerts = []
    for i in range(count):
        made = synthetic_alert(rng)
        service = made.service or "unknown"
        alerts.append(
            NormalizedAlert(
                source="generic",
                fingerprint=f"bench-{i}",
                status="firing",
                alertname=f"BenchAlert{i:05d}",
                service=service,
                severity=rng.choice(("critical", "high", "warning", "info")),
                summary=made.text[:200],
                description=made.text,
                labels={"service": service, "env": "prod", "region": rng.choice(("eu", "us"))},
                annotations={"dashboard": f"https://grafana.example/d/{service}"},
                starts_at=now - timedelta(minutes=rng.randint(0, 60 * 24 * 90)),
                ends_at=None,
                generator_url=f"https://prometheus.example/graph?g0.expr=bench{i}",
                runbook_url=None,
                dedup_key=None,
                raw={},
            )
        )
    return alerts


def _fill_database(
    container: Container, incidents: int, briefings: list[dict[str, Any]], rng: random.Random
) -> None:
    alerts = _alerts(incidents, rng)
    for start in range(0, incidents, BATCH):
        with transaction(container.sessions) as db:
            results = ingest(db_session=db, alerts=alerts[start : start + BATCH], via="bench")
            for result in results:
                incident = incident_service.get_by_public_id(db_session=db, public_id=str(result.incident))
                assert incident is not None
                data = briefings[incident.id % len(briefings)]
                briefing_service.store_briefing(
                    db_session=db,
                    incident_id=incident.id,
                    data=data,
                    mode=data["mode"],
                    memory=data["memory"],
                )
                if rng.random() < 0.75:
                    record = synthetic_record(incident.id, rng)
                    fields = ResolutionFields(
                        **{f: getattr(record, f) for f in ResolutionFields.model_fields}
                    )
                    resolution_service.resolve(db_session=db, incident=incident, fields=fields, actor="bench")
    with transaction(container.sessions) as db:  # the briefings are stored: their jobs are done
        db.execute(update(Job).values(state="done", finished_at=utcnow()))


def _time(client: TestClient, path: str, runs: int, warmup: int = 3) -> tuple[list[float], int]:
    size = 0
    for _ in range(warmup):
        response = client.get(path)
        assert response.status_code == 200, f"{path}: {response.status_code}"
        size = len(response.content)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    return samples, size


def _timing(page: str, path: str, samples: list[float], size: int) -> Timing:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Timing(
        page=page, path=path, p50_ms=round(statistics.median(samples), 2), p95_ms=round(p95, 2), bytes=size
    )


def run_pages_bench(
    *, incidents: int = 1000, runs: int = 30, bank_records: int = 300, seed: int = 7
) -> Result:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="recallops-pages-") as tmp:
        app = create_app(sandbox_settings(Path(tmp)))
        with TestClient(app) as client:
            container: Container = app.state.container
            portal = client.portal
            assert portal is not None
            started = time.perf_counter()
            bank = container.bank
            assert isinstance(bank, EmbeddedBank), "the pages bench seeds the embedded bank"
            portal.call(build_bank, bank, bank_records, seed)

            async def brief_some() -> list[dict[str, Any]]:
                async with open_agent(container) as agent:
                    made = [await agent.brief(synthetic_alert(rng)) for _ in range(8)]
                return [b.model_dump(mode="json") for b in made]

            _fill_database(container, incidents, portal.call(brief_some), rng)

            async def refresh_profile() -> None:
                operation = await profile.request_refresh(container, profile.Scope(None))
                while operation.status in ("pending", "running"):
                    fresh = await profile.get_operation(container, operation.id)
                    assert fresh is not None
                    operation = fresh

            portal.call(refresh_profile)
            with transaction(container.sessions) as db:
                users.add_user(db_session=db, name="bench", role="engineer", password=PASSWORD)
            build_s = round(time.perf_counter() - started, 1)
            _sign_in(client)
            pages = _pages(container)
            timings = [_timing(name, path, *_time(client, path, runs)) for name, path in pages]
            floor = _timing("healthz", "/healthz", *_time(client, "/healthz", runs))
    return Result(
        incidents=incidents, runs=runs, bank_records=bank_records, build_s=build_s, pages=timings, floor=floor
    )


def _sign_in(client: TestClient) -> None:
    match = CSRF.search(client.get("/signin").text)
    assert match is not None
    data = {"name": "bench", "password": PASSWORD, "csrf_token": match.group(1), "next": "/incidents"}
    assert client.post("/signin", data=data, follow_redirects=False).status_code == 303


def _pages(container: Container) -> list[tuple[str, str]]:
    with container.sessions() as db:
        listing = incident_service.list_incidents(db_session=db, status=("triggered",), limit=1)
        resolved = incident_service.list_incidents(db_session=db, status=("resolved",), limit=1)
        services = incident_service.distinct_services(db_session=db)
    open_id, closed_id = listing.items[0].public_id, resolved.items[0].public_id
    return [
        ("incident list", "/incidents"),
        ("incident list, filtered", f"/incidents?status=open&service={services[0]}&age=30d"),
        ("incident list, page 10", "/incidents?page=10"),
        ("incident (open)", f"/incidents/{open_id}"),
        ("incident (resolved)", f"/incidents/{closed_id}"),
        ("resolve form", f"/incidents/{open_id}/resolve"),
        ("record", f"/records/{closed_id}"),
        ("profile", "/profile"),
        ("memory search", f"/memory?q=connection+pool+exhausted&service={services[0]}"),
    ]


def summary(result: Result) -> str:
    lines = [
        f"pages with {result.incidents} incidents, {result.bank_records} records in memory, "
        f"{result.runs} runs each (built in {result.build_s} s)",
        f"{'page':<26} {'p50 ms':>8} {'p95 ms':>8} {'KiB':>6}",
    ]
    for t in [*result.pages, result.floor]:
        lines.append(f"{t.page:<26} {t.p50_ms:>8.1f} {t.p95_ms:>8.1f} {t.bytes / 1024:>6.1f}")
    return "\n".join(lines)
