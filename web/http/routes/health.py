"""Liveness, readiness (database, memory, LLM) and Prometheus metrics.

Readiness asks the database for a committed write, not a read: a full disk or a read-only database
still answers ``SELECT 1`` while every write fails, and a replica in that state must leave the pool.
"""

import asyncio
import secrets
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import Engine, update

from agent.llm import STATUS as LLM_STATUS
from incidents.database import insert_ignoring_conflicts, table_of
from incidents.incident.models import Counter
from web.app.container import Container
from web.app.tasks import lane_status
from web.http.auth import CHALLENGE
from web.http.deps import get_container
from web.http.security import bearer_secret

router = APIRouter(tags=["operations"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


_COUNTERS = table_of(Counter)
PROBE = "readyz"  # the counter row readiness writes: how many probes this database has taken
# A probe waits this long for memory: a hung memory server must not make every replica miss its probe
# (Kubernetes waits 1 s by default), and memory does not gate readiness anyway.
READY_MEMORY_S = 0.5


def _write_probe(engine: Engine) -> None:
    """Commit one small write (bump the probe counter), or raise why the database cannot."""
    with engine.begin() as connection:
        connection.execute(
            insert_ignoring_conflicts(engine.dialect.name, _COUNTERS, ["name"]).values(name=PROBE)
        )
        connection.execute(
            update(_COUNTERS).where(_COUNTERS.c.name == PROBE).values(value=_COUNTERS.c.value + 1)
        )


@router.get("/readyz")
async def readyz(container: Container = Depends(get_container)) -> JSONResponse:
    checks: dict[str, Any] = {}
    try:
        await asyncio.to_thread(_write_probe, container.engine)
        checks["database"] = {"ok": True}
    except Exception as exc:
        checks["database"] = {"ok": False, "detail": f"cannot take a write: {type(exc).__name__}: {exc}"}
    try:
        health = await asyncio.wait_for(container.bank.health(), READY_MEMORY_S)
        checks["memory"] = {"ok": health.ok, "driver": health.driver, "detail": health.detail}
    except TimeoutError:
        detail = f"no answer within {READY_MEMORY_S:g} s"
        checks["memory"] = {"ok": False, "driver": container.bank.driver, "detail": detail}
    llm = container.settings.llm
    checks["llm"] = (
        {"mode": "llm", "model": llm.llm_model, **LLM_STATUS.as_dict()}
        if llm.uses_llm
        else {"ok": True, "mode": "evidence-only"}
    )
    # Each worker lane's backlog (every replica) and in-flight count (this one): a lane that falls
    # behind shows here, but does not make the replica unready.
    checks["lanes"] = await asyncio.to_thread(lane_status, container.lanes)
    # Memory down degrades briefings, it does not stop intake: only the database gates readiness.
    status = 200 if checks["database"]["ok"] else 503
    return JSONResponse(status_code=status, content={"ready": status == 200, "checks": checks})


@router.get("/metrics", responses={401: {"description": "RECALLOPS_METRICS_TOKEN is set and was not sent"}})
def metrics(request: Request, container: Container = Depends(get_container)) -> Response:
    """Prometheus text; behind ``Authorization: Bearer <RECALLOPS_METRICS_TOKEN>`` when that is set."""
    expected = container.settings.web.metrics_token
    if expected:
        sent = (bearer_secret(request) or "").encode("utf-8", "surrogatepass")
        if not secrets.compare_digest(sent, expected.encode("utf-8", "surrogatepass")):
            raise HTTPException(401, "send the metrics token as a bearer token", headers=CHALLENGE)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
