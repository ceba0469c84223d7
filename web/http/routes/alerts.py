"""Alert intake over HTTP: one route per source, each storing before it answers.

Flow of a request: authenticate the sender, read the body (``web.http.body``), validate it against the
source's model, map it to normalized alerts, store and route them (``web.app.write_thread``: on
SQLite in a savepoint of a transaction shared with the deliveries that arrived meanwhile), commit, then
answer. A 2xx therefore means the alerts are on disk; an error means nothing of them was written.
"""

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import DataError, DBAPIError, OperationalError
from sqlalchemy.orm import Session

from incidents.alerts.adapters import SOURCES
from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.schemas import LabelLimits, PagerDutyEvent
from incidents.alerts.service import IngestResult, Outcome, ingest
from web.app import metrics
from web.app.container import Container
from web.http.auth import recheck, require, token_principal
from web.http.body import BodyError, read_json, request_body_schema
from web.http.deps import get_container
from web.http.errors import DATABASE_DOWN, RETRY_AFTER, UNAVAILABLE, pagerduty_error, said
from web.http.security import Principal, bearer_secret

log = logging.getLogger(__name__)
router = APIRouter(tags=["alerts"])

SCOPE = "alerts:write"
PD_SUCCESS = {"status": "success", "message": "Event processed"}


class AlertOutcome(BaseModel):
    """What became of one alert: ``stored`` (new), ``escalated`` (a firing alert sent again with a
    severity worse than it had: stored again with it, its incident's severity raised if lower) or
    ``duplicate`` (a repeat that changed nothing)."""

    fingerprint: str
    status: str
    outcome: Outcome
    incident: str | None
    opened: bool
    severity: str = Field(description="the severity this delivery gave the alert")
    previous_severity: str | None = Field(
        default=None, description="escalated: the worst severity the alert had before"
    )


class IntakeResponse(BaseModel):
    """``accepted`` is ``stored`` + ``escalated`` + ``duplicates``."""

    accepted: int
    stored: int
    escalated: int
    duplicates: int
    incidents: list[str]
    alerts: list[AlertOutcome]


class PagerDutyResponse(BaseModel):
    status: str
    message: str
    dedup_key: str


class PagerDutyError(BaseModel):
    status: str
    message: str
    errors: list[str]
    detail: str


class IntakeError(BaseModel):
    """An intake refusal: ``detail`` in one line; a payload error adds ``errors``, one line per problem."""

    detail: str
    errors: list[str] | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"description": text, "model": IntakeError}
    for code, text in (
        (400, "not JSON"),
        (401, "missing or invalid token"),
        (403, "token lacks alerts:write"),
        (413, "body over the size limit"),
        (415, "not application/json"),
        (422, "payload does not match the source's format"),
        (503, "database busy; retry"),
    )
}


def _limits(container: Container) -> LabelLimits:
    settings = container.settings.incidents
    return LabelLimits(max_labels=settings.max_labels, max_label_chars=settings.max_label_chars)


def _validation_errors(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "body"
        problems.append(f"{where}: {said(error)}")
    return problems


def _normalize(container: Container, source: str, raw: Any) -> list[NormalizedAlert]:
    model, adapter = SOURCES[source]
    try:
        body = model.model_validate(raw, context={"limits": _limits(container)})
    except ValidationError as exc:
        problems = _validation_errors(exc)
        raise BodyError(422, f"invalid {source} payload: " + "; ".join(problems[:5]), problems) from exc
    return adapter(body, raw, container.settings.incidents.service_labels)


def _store(
    db: Session, alerts: Sequence[NormalizedAlert], principal: Principal, request: Request | None
) -> list[IngestResult]:
    """The payload's alerts, inside the transaction the intake write thread commits. With ``request``,
    the caller (let in by the gate on a recent check) is checked again first, in that transaction."""
    if request is not None:
        recheck(request, principal, db)
    return ingest(db_session=db, alerts=alerts, via=principal.name)


async def _accept(
    container: Container,
    source: str,
    alerts: list[NormalizedAlert],
    principal: Principal,
    rechecked: Request | None = None,
) -> list[IngestResult]:
    try:
        results = await container.intake.write(_store, alerts, principal, rechecked)
    except DataError as exc:
        raise BodyError(422, f"a value does not fit the database: {exc.orig}") from exc
    except (OperationalError, DBAPIError) as exc:
        log.warning("alert intake could not write", extra={"error": str(exc.orig)})
        raise BodyError(503, UNAVAILABLE) from exc
    if container.worker is not None and any(result.opened for result in results):
        container.worker.wake()
    for result in results:
        metrics.ALERTS_RECEIVED.labels(source, result.outcome).inc()
        if result.outcome == "escalated":
            log.info(
                "alert re-sent with a worse severity",
                extra={
                    "source": source,
                    "sender": principal.name,
                    "fingerprint": result.fingerprint,
                    "incident": result.incident,
                    "severity": f"{result.previous_severity} -> {result.severity}",
                },
            )
    return results


def _summary(results: list[IngestResult]) -> dict[str, Any]:
    incidents = list(dict.fromkeys(r.incident for r in results if r.incident))
    outcomes = Counter(r.outcome for r in results)
    return {
        "accepted": len(results),
        "stored": outcomes["stored"],
        "escalated": outcomes["escalated"],
        "duplicates": outcomes["duplicate"],
        "incidents": incidents,
        "alerts": [
            {
                "fingerprint": r.fingerprint,
                "status": r.status,
                "outcome": r.outcome,
                "incident": r.incident,
                "opened": r.opened,
                "severity": r.severity,
                "previous_severity": r.previous_severity,
            }
            for r in results
        ],
    }


async def _intake(request: Request, source: str, principal: Principal) -> JSONResponse:
    started = time.perf_counter()
    container = get_container(request)
    try:
        raw = await read_json(request)
        alerts = _normalize(container, source, raw)
        results = await _accept(container, source, alerts, principal, rechecked=request)
    except BodyError as exc:
        metrics.ALERTS_RECEIVED.labels(source, "rejected").inc()
        retry = RETRY_AFTER if exc.status == 503 else None
        return JSONResponse(
            status_code=exc.status, content={"detail": exc.detail, "errors": exc.errors}, headers=retry
        )
    finally:
        metrics.INTAKE_LATENCY.labels(source).observe(time.perf_counter() - started)
    return JSONResponse(status_code=200, content=_summary(results))


def _route(source: str, model: type[BaseModel], summary: str) -> None:
    async def receive(request: Request, principal: Principal = Depends(require(SCOPE))) -> JSONResponse:
        return await _intake(request, source, principal)

    receive.__doc__ = summary
    path = "/api/v1/alerts" if source == "generic" else f"/api/v1/alerts/{source}"
    router.post(
        path,
        response_model=IntakeResponse,
        responses=ERRORS,
        openapi_extra=request_body_schema(model),
        name=f"alerts_{source}",
        summary=summary,
    )(receive)


for _source, _summary_text in (
    ("alertmanager", "Prometheus Alertmanager webhook (version 4)"),
    ("grafana", "Grafana unified alerting webhook contact point"),
    ("generic", "RecallOps generic JSON alert"),
):
    _route(_source, SOURCES[_source][0], _summary_text)


def _pd_error(status: int, kind: str, message: str, errors: list[str]) -> JSONResponse:
    retry = RETRY_AFTER if status == 503 else None
    return JSONResponse(status_code=status, content=pagerduty_error(kind, message, errors), headers=retry)


PD_ROUTE: dict[str, Any] = {
    "status_code": 202,
    "response_model": PagerDutyResponse,
    "responses": {code: {"model": PagerDutyError} for code in (400, 401, 403, 413, 415, 503)},
    "openapi_extra": request_body_schema(PagerDutyEvent),
    "summary": "PagerDuty Events API v2 (trigger, acknowledge, resolve)",
}


@router.post("/v2/enqueue", **PD_ROUTE)
@router.post("/api/v1/alerts/pagerduty", **PD_ROUTE)
async def pagerduty(request: Request) -> JSONResponse:
    """Speaks PagerDuty's dialect so ``pdpyras`` works unchanged: the ``routing_key`` is a RecallOps
    token with ``alerts:write`` (a bearer header, when sent, is used instead), errors come back in
    PagerDuty's shape."""
    started = time.perf_counter()
    container = get_container(request)
    try:
        raw = await read_json(request)
        principal = await run_in_threadpool(_pd_principal, request, container, raw)
        if principal is None:
            return _pd_error(401, "unauthorized", "Invalid routing key", ["routing_key is not a valid token"])
        if not principal.can(SCOPE):
            return _pd_error(403, "forbidden", "Forbidden", [f"{principal.name!r} lacks the {SCOPE!r} scope"])
        alerts = _normalize(container, "pagerduty", raw)
        await _accept(container, "pagerduty", alerts, principal)
    except DATABASE_DOWN:  # the routing key could not be looked up
        return _pd_error(503, "unavailable", UNAVAILABLE, [UNAVAILABLE])
    except BodyError as exc:
        metrics.ALERTS_RECEIVED.labels("pagerduty", "rejected").inc()
        if exc.status == 503:
            return _pd_error(503, "unavailable", UNAVAILABLE, exc.errors)
        status = 400 if exc.status == 422 else exc.status
        return _pd_error(status, "invalid event", "Event object is invalid", exc.errors)
    finally:
        metrics.INTAKE_LATENCY.labels("pagerduty").observe(time.perf_counter() - started)
    return JSONResponse(status_code=202, content={**PD_SUCCESS, "dedup_key": alerts[0].dedup_key})


def _pd_principal(request: Request, container: Container, raw: Any) -> Principal | None:
    secret = bearer_secret(request)
    if secret is None:
        routing_key = raw.get("routing_key") if isinstance(raw, dict) else None
        if not isinstance(routing_key, str):
            raise BodyError(400, "routing_key is missing", ["routing_key: Field required"])
        secret = routing_key
    with container.sessions() as db:
        return token_principal(db, secret)


@router.post("/api/v1/alerts/{source}", status_code=404, responses={404: {"description": "unknown source"}})
async def unknown_source(source: str) -> JSONResponse:
    """Any other source name: a 404 that names it and lists the known ones."""
    known = ", ".join(f"/api/v1/alerts/{name}" for name in SOURCES if name != "generic")
    return JSONResponse(
        status_code=404, content={"detail": f"unknown alert source {source!r}; use {known} or /api/v1/alerts"}
    )
