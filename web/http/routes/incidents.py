"""The incident API: list with filters, detail with alerts and timeline, acknowledge."""

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from pydantic import AfterValidator
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.alerts.schemas import Timestamp
from incidents.delivery.status import incident_delivery
from incidents.incident import service
from incidents.incident.models import Incident
from incidents.incident.schemas import (
    AcknowledgeResult,
    AlertRead,
    EventRead,
    IncidentDetail,
    IncidentPageRead,
    IncidentRead,
)
from incidents.locking import serialized_writes
from web.http.auth import require
from web.http.deps import get_db
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"])

StatusFilter = Literal["triggered", "acknowledged", "resolved", "open"]


def _storable(value: str) -> str:
    """PostgreSQL refuses NUL in text: a 422 here rather than a database error later."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


Storable = Annotated[str, AfterValidator(_storable)]
PublicId = Annotated[Storable, Path(min_length=1, max_length=64, description="Readable id, e.g. INC-0001")]
AUTH_ERRORS: dict[int | str, dict[str, str]] = {
    401: {"description": "missing or invalid token"},
    403: {"description": "token lacks the scope"},
}


def _read(incident: Incident, recurrence_of: str | None) -> IncidentRead:
    return IncidentRead.model_validate(
        {**_columns(incident), "id": incident.public_id, "recurrence_of": recurrence_of}
    )


def _columns(incident: Incident) -> dict[str, object]:
    return {name: getattr(incident, name) for name in IncidentRead.model_fields if hasattr(incident, name)}


def _load(db: Session, public_id: str) -> Incident:
    incident = service.get_by_public_id(db_session=db, public_id=public_id)
    if incident is None:
        raise HTTPException(404, f"no incident {public_id!r}")
    return incident


def _recurrence_of(db: Session, incident: Incident) -> str | None:
    if incident.recurrence_of_id is None:
        return None
    return service.public_ids(db_session=db, ids=[incident.recurrence_of_id]).get(incident.recurrence_of_id)


@router.get("", response_model=IncidentPageRead, responses=AUTH_ERRORS)
def list_incidents(
    status: Annotated[list[StatusFilter], Query(description="Repeat to combine; 'open' = not resolved")] = [],  # noqa: B006
    service_name: Annotated[Storable | None, Query(alias="service", max_length=255)] = None,
    severity: Annotated[
        Storable | None,
        Query(
            max_length=32,
            description="A level (critical) or any spelling of one (p1): every incident on that level; "
            "a severity no alerting system is known to send matches only itself, in any case",
        ),
    ] = None,
    since: Annotated[Timestamp | None, Query(description="Opened at or after this time (ISO 8601)")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    _: Principal = Depends(require("read")),
    db: Session = Depends(get_db),
) -> IncidentPageRead:
    """Newest first."""
    statuses: set[str] = set()
    for value in status:
        statuses.update(service.OPEN_STATUSES if value == "open" else (value,))
    page = service.list_incidents(
        db_session=db,
        status=sorted(statuses),
        service=service_name,
        severity=severity,
        since=since,
        limit=limit,
        offset=offset,
    )
    links = service.public_ids(
        db_session=db, ids=sorted({i.recurrence_of_id for i in page.items if i.recurrence_of_id})
    )
    items = [_read(i, links.get(i.recurrence_of_id or 0)) for i in page.items]
    next_offset = offset + len(items) if offset + len(items) < page.total else None
    return IncidentPageRead(
        items=items, total=page.total, limit=limit, offset=offset, next_offset=next_offset
    )


@router.get(
    "/{public_id}",
    response_model=IncidentDetail,
    responses={**AUTH_ERRORS, 404: {"description": "no such incident"}},
)
def get_incident(
    public_id: PublicId,
    alerts_limit: Annotated[int, Query(ge=1, le=500, description="Newest alerts to include")] = 50,
    _: Principal = Depends(require("read")),
    db: Session = Depends(get_db),
) -> IncidentDetail:
    """The incident with its newest alerts (firing ones marked once cleared), its whole timeline and,
    per chat channel, whether its briefing was sent, is on its way, failing, failed or held by the
    receiver (as the incident page says)."""
    incident = _load(db, public_id)
    # Counted before the alerts are read: on PostgreSQL each statement sees the latest commit, so a
    # count of 0 guarantees the resolved notice that cleared the last alert is in the list below.
    active = service.active_alert_count(db_session=db, incident=incident)
    window = service.newest_alerts(db_session=db, incident=incident, limit=alerts_limit)
    alert_reads = [
        AlertRead.model_validate(a).model_copy(update={"cleared": a.id in window.cleared})
        for a in window.alerts
    ]
    recurrences = list(
        db.scalars(
            select(Incident.public_id).where(Incident.recurrence_of_id == incident.id).order_by(Incident.id)
        )
    )
    base = _read(incident, _recurrence_of(db, incident))
    return IncidentDetail(
        **base.model_dump(),
        active_alerts=active,
        recurrences=recurrences,
        alerts_total=window.total,
        alerts=alert_reads,
        timeline=[EventRead.model_validate(e) for e in service.timeline(db_session=db, incident=incident)],
        delivery=incident_delivery(db_session=db, incident=incident),
    )


@router.post(
    "/{public_id}/acknowledge",
    response_model=AcknowledgeResult,
    responses={**AUTH_ERRORS, 404: {"description": "no such incident"}, 409: {"description": "resolved"}},
)
def acknowledge(
    public_id: PublicId,
    principal: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
) -> AcknowledgeResult:
    """Mark the incident as being worked on; the caller's name goes on the timeline."""
    with serialized_writes(db):
        incident = _load(db, public_id)
        try:
            changed = service.acknowledge(db_session=db, incident=incident, actor=principal.name)
        except service.IncidentError as exc:
            raise HTTPException(409, str(exc)) from exc
        db.commit()
    return AcknowledgeResult(changed=changed, incident=_read(incident, _recurrence_of(db, incident)))
