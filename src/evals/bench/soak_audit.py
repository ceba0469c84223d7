"""The soak's audit: after the storm, read every row it caused back through the API and count faults.

Waits (up to ``drain_timeout_s``) until the workers have caught up (every incident briefed, every
resolved incident synced to memory), then counts, over every incident of the run's services:

- **lost**: alerts answered 2xx whose fingerprint is on no incident;
- **duplicated**: fingerprints stored more than once;
- **extra open incidents**: a service with more than one incident open (dedup failed across replicas);
- **briefings missing / duplicated**: incidents with no automatic briefing, or more than one;
- **memory unsynced**: resolved incidents whose record has not reached memory;
- **resolves lost**: resolves answered 201 whose incident is not resolved.

``unverifiable`` counts incidents with more alerts than one detail page shows (500); the soak keeps
incidents far below that by resolving as it goes.
"""

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import httpx

PAGE = 500
PARALLEL = 8
T = TypeVar("T")
K = TypeVar("K")


@dataclass(frozen=True)
class Audit:
    incidents: int
    lost: int
    duplicated: int
    extra_open_incidents: int
    briefings_missing: int
    briefings_duplicated: int
    memory_unsynced: int
    resolves_lost: int
    unverifiable: int
    drain_s: float

    @property
    def clean(self) -> bool:
        faults = asdict(self)
        return not any(faults[k] for k in faults if k not in ("incidents", "drain_s"))


async def _each(keys: Iterable[K], fetch: Callable[[K], Awaitable[T]]) -> dict[K, T]:
    gate = asyncio.Semaphore(PARALLEL)

    async def one(key: K) -> tuple[K, T]:
        async with gate:
            return key, await fetch(key)

    return dict(await asyncio.gather(*(one(k) for k in keys)))


async def _json(client: httpx.AsyncClient, path: str, **params: Any) -> Any:
    response = await client.get(path, params=params)
    response.raise_for_status()
    return response.json()


async def run_incidents(client: httpx.AsyncClient, services: list[str]) -> list[dict[str, Any]]:
    """Every incident of the run's services, whatever its status."""

    async def of_service(service: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        offset: int | None = 0
        while offset is not None:
            page = await _json(client, "/api/v1/incidents", service=service, limit=PAGE, offset=offset)
            found.extend(page["items"])
            offset = page["next_offset"]
        return found

    pages = await _each(services, of_service)
    return [incident for service in services for incident in pages[service]]


async def _settled(client: httpx.AsyncClient, incident: dict[str, Any]) -> bool:
    """Briefed, and synced to memory if resolved."""
    public_id = incident["id"]
    if not await _json(client, f"/api/v1/incidents/{public_id}/briefings"):
        return False
    if incident["status"] != "resolved":
        return True
    memory = await _json(client, f"/api/v1/incidents/{public_id}/memory")
    return memory is not None and memory.get("state") == "synced"


async def drain(client: httpx.AsyncClient, services: list[str], timeout_s: float) -> float:
    """Wait until every incident of the run has settled; returns the seconds it took (or the timeout)."""
    started = time.perf_counter()
    incidents = {i["id"]: i for i in await run_incidents(client, services)}
    waiting = list(incidents)
    while waiting and time.perf_counter() - started < timeout_s:
        done = await _each(waiting, lambda key: _settled(client, incidents[key]))
        waiting = [key for key, ok in done.items() if not ok]
        if waiting:
            await asyncio.sleep(1.0)
    return time.perf_counter() - started


async def audit(
    client: httpx.AsyncClient,
    *,
    accepted: dict[str, str],
    resolved: set[str],
    services: list[str],
    drain_timeout_s: float,
) -> Audit:
    drain_s = await drain(client, services, drain_timeout_s)
    incidents = await run_incidents(client, services)
    ids = [i["id"] for i in incidents]
    details = await _each(ids, lambda key: _json(client, f"/api/v1/incidents/{key}", alerts_limit=PAGE))
    versions = await _each(ids, lambda key: _json(client, f"/api/v1/incidents/{key}/briefings"))
    resolved_now = [key for key in ids if details[key]["status"] == "resolved"]
    memory = await _each(resolved_now, lambda key: _json(client, f"/api/v1/incidents/{key}/memory"))

    stored = Counter(alert["fingerprint"] for detail in details.values() for alert in detail["alerts"])
    open_per_service = Counter(d["service"] for d in details.values() if d["status"] != "resolved")
    return Audit(
        incidents=len(ids),
        lost=len(set(accepted) - set(stored)),
        duplicated=sum(count - 1 for count in stored.values() if count > 1),
        extra_open_incidents=sum(count - 1 for count in open_per_service.values() if count > 1),
        briefings_missing=sum(1 for key in ids if not versions[key]),
        briefings_duplicated=sum(max(0, len(versions[key]) - 1) for key in ids),
        memory_unsynced=sum(1 for key in resolved_now if (memory[key] or {}).get("state") != "synced"),
        resolves_lost=sum(1 for key in resolved if details.get(key, {}).get("status") != "resolved"),
        unverifiable=sum(1 for d in details.values() if d["alerts_total"] > len(d["alerts"])),
        drain_s=round(drain_s, 1),
    )
