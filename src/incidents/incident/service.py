"""Incidents: opening, grouping lookups, acknowledgement, the timeline, listing.

Keyword-only functions with an explicit session; they ``flush()`` and leave the commit to the caller,
so an incident, its first event and its briefing job land together or not at all.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, and_, bindparam, case, exists, func, insert, or_, select, update
from sqlalchemy.orm import Session, aliased
from sqlalchemy.orm.util import identity_key

from incidents.alerts.models import Alert
from incidents.briefings.models import Briefing, Job
from incidents.database import table_of
from incidents.delivery import outbox as deliveries
from incidents.delivery.routing import BRIEFING_STORED, INCIDENT_ACKNOWLEDGED
from incidents.incident.models import Incident, IncidentEvent
from incidents.incident.numbering import next_public_id
from incidents.severity import level_of, level_or_itself, outranks, rank
from incidents.timeutil import utcnow

OPEN_STATUSES = ("triggered", "acknowledged")
STATUSES = (*OPEN_STATUSES, "resolved")


class IncidentError(ValueError):
    """A change an incident's state does not allow; the message says why."""


class IncidentNotFound(LookupError):
    """No incident has this public id (the argument)."""


@dataclass(frozen=True)
class GroupKey:
    """What makes alerts one incident: PagerDuty's dedup key, or else service and alert name."""

    service: str
    alertname: str
    dedup_key: str | None

    @property
    def lock_name(self) -> str:
        return f"dedup:{self.dedup_key}" if self.dedup_key else f"group:{self.service}\x1f{self.alertname}"


@dataclass(frozen=True)
class IncidentPage:
    items: list[Incident]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class AlertWindow:
    """The newest alerts of an incident (oldest first among them), out of ``total``."""

    alerts: list[Alert]
    total: int
    cleared: set[int]  # ids of firing alerts among them that a resolved notice has cleared


def get_by_public_id(*, db_session: Session, public_id: str) -> Incident | None:
    return db_session.scalar(select(Incident).where(Incident.public_id == public_id))


def _group_filter(group: GroupKey) -> list[Any]:
    if group.dedup_key:
        return [Incident.dedup_key == group.dedup_key]
    return [
        Incident.service == group.service,
        Incident.alertname == group.alertname,
        Incident.dedup_key.is_(None),
    ]


@dataclass(frozen=True)
class OpenIncident:
    """An open incident as intake routes an alert to it: found and counted in SQL, not loaded as a row."""

    id: int
    public_id: str
    severity: str
    service: str


_INCIDENTS = table_of(Incident)


def _open_in_group(*, by_dedup: bool) -> Any:
    """The newest open incident of a group (bind ``dedup_key``, else ``service`` and ``alertname``).
    The statuses are spelled out: an IN list is expanded again on every call."""
    c = _INCIDENTS.c
    where = [or_(*(c.status == status for status in OPEN_STATUSES))]
    if by_dedup:
        where.append(c.dedup_key == bindparam("dedup_key"))
    else:
        where += [
            c.service == bindparam("service"),
            c.alertname == bindparam("alertname"),
            c.dedup_key.is_(None),
        ]
    return select(c.id, c.public_id, c.severity, c.service).where(*where).order_by(c.id.desc()).limit(1)


# Intake runs these for every alert: Core statements built once with bind parameters and run on the
# session's connection, so SQLAlchemy neither rebuilds nor re-keys them, nor loads ORM rows, per call.
_OPEN_BY_NAME = _open_in_group(by_dedup=False)
_OPEN_BY_DEDUP = _open_in_group(by_dedup=True)
_INSERT_EVENT = insert(table_of(IncidentEvent))
_COUNT_ALERT = (
    update(_INCIDENTS)
    .where(_INCIDENTS.c.id == bindparam("incident_id"))
    .values(
        alert_count=_INCIDENTS.c.alert_count + 1,
        last_seen=bindparam("now"),
        updated_at=bindparam("now"),
        severity=func.coalesce(bindparam("raised_to", type_=String), _INCIDENTS.c.severity),
    )
)

_LATEST_VERSION = select(func.max(Briefing.version)).where(Briefing.incident_id == bindparam("incident_id"))
_SEEN_AGAIN = (
    update(_INCIDENTS)
    .where(_INCIDENTS.c.id == bindparam("incident_id"))
    .values(
        last_seen=bindparam("now"),
        updated_at=bindparam("now"),
        severity=func.coalesce(bindparam("raised_to", type_=String), _INCIDENTS.c.severity),
    )
)


def find_open(*, db_session: Session, group: GroupKey) -> OpenIncident | None:
    if group.dedup_key:
        statement, params = _OPEN_BY_DEDUP, {"dedup_key": group.dedup_key}
    else:
        statement, params = _OPEN_BY_NAME, {"service": group.service, "alertname": group.alertname}
    row = db_session.connection().execute(statement, params).first()
    if row is None:
        return None
    return OpenIncident(id=row.id, public_id=row.public_id, severity=row.severity, service=row.service)


def find_latest(*, db_session: Session, group: GroupKey, status: str | None = None) -> Incident | None:
    query = select(Incident).where(*_group_filter(group))
    if status is not None:
        query = query.where(Incident.status == status)
    return db_session.scalar(query.order_by(Incident.id.desc()).limit(1))


def add_event(
    *,
    db_session: Session,
    incident: Incident | OpenIncident,
    kind: str,
    actor: str,
    message: str,
    data: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> None:
    """One timeline line: what happened (``kind``, ``message``), when, and who or which source. A Core
    insert on the session's connection: it needs nothing of the ORM, and intake writes one per alert."""
    db_session.connection().execute(
        _INSERT_EVENT,
        {
            "incident_id": incident.id,
            "at": at or utcnow(),
            "kind": kind,
            "actor": actor,
            "message": message,
            "data": data or {},
        },
    )


def open_incident(*, db_session: Session, alert: Alert, group: GroupKey, actor: str) -> Incident:
    """A new incident for this alert, linked to the last resolved one of its group as a recurrence,
    with its briefing job queued in the same transaction."""
    now = utcnow()
    previous = find_latest(db_session=db_session, group=group, status="resolved")
    incident = Incident(
        public_id=next_public_id(db_session=db_session),
        title=alert.summary or alert.alertname,
        service=group.service,
        alertname=group.alertname,
        severity=alert.severity,
        status="triggered",
        dedup_key=group.dedup_key,
        origin="alert",
        alert_count=1,
        first_seen=alert.starts_at,
        last_seen=now,
        created_at=now,
        updated_at=now,
        recurrence_of_id=previous.id if previous else None,
    )
    db_session.add(incident)
    db_session.flush()
    db_session.add(Job(kind="briefing", incident_id=incident.id))
    message = f"opened by {alert.source} alert {alert.alertname} on {alert.service}"
    data: dict[str, Any] = {"alert_id": alert.id, "fingerprint": alert.fingerprint, "source": alert.source}
    if previous is not None:
        message += f"; recurrence of {previous.public_id}"
        data["recurrence_of"] = previous.public_id
    add_event(
        db_session=db_session,
        incident=incident,
        kind="opened",
        actor=actor,
        message=message,
        data=data,
        at=now,
    )
    return incident


def join(*, db_session: Session, incident: OpenIncident, alert: Alert, actor: str) -> None:
    """A firing alert of the same group: counted on the open incident, severity raised if it is worse.

    One UPDATE counts it in SQL (right even if another transaction counted first) and raises the
    severity when the alert's is worse than the one read with the incident."""
    now = utcnow()
    raised = outranks(alert.severity, incident.severity)
    connection = db_session.connection()
    connection.execute(
        _COUNT_ALERT,
        {"incident_id": incident.id, "now": now, "raised_to": alert.severity if raised else None},
    )
    data = {"alert_id": alert.id, "fingerprint": alert.fingerprint, "source": alert.source}
    add_event(
        db_session=db_session,
        incident=incident,
        kind="alert_firing",
        actor=actor,
        message=f"{alert.source} alert {alert.alertname} firing ({alert.fingerprint})",
        data=data,
        at=now,
    )
    if raised:
        _severity_raised(db_session, incident, alert.severity, actor, data, now)
    _expire_loaded(db_session, incident)


def escalate(*, db_session: Session, incident: OpenIncident, alert: Alert, was: str, actor: str) -> None:
    """A firing alert the incident already has, sent again with a severity worse than it had (``was``):
    ``alert`` is the row that records it since now, so the incident's alerts say when it rose. Seen
    again, not counted again; the incident's severity rises when the alert's is worse, and the timeline
    says which of the two rose."""
    now = utcnow()
    raised = outranks(alert.severity, incident.severity)
    db_session.connection().execute(
        _SEEN_AGAIN, {"incident_id": incident.id, "now": now, "raised_to": alert.severity if raised else None}
    )
    data = {"alert_id": alert.id, "fingerprint": alert.fingerprint, "source": alert.source}
    if raised:
        by = f"by a re-sent {alert.source} alert {alert.alertname} ({alert.fingerprint})"
        _severity_raised(db_session, incident, alert.severity, actor, data, now, by=by)
    else:
        add_event(
            db_session=db_session,
            incident=incident,
            kind="alert_escalated",
            actor=actor,
            message=(
                f"{alert.source} alert {alert.alertname} re-sent with severity {alert.severity} (was {was}); "
                f"the incident is already {incident.severity} ({alert.fingerprint})"
            ),
            data={"from": was, "to": alert.severity, **data},
            at=now,
        )
    _expire_loaded(db_session, incident)


def _severity_raised(
    db_session: Session,
    incident: OpenIncident,
    severity: str,
    actor: str,
    data: dict[str, Any],
    at: datetime,
    by: str = "",
) -> None:
    add_event(
        db_session=db_session,
        incident=incident,
        kind="severity_raised",
        actor=actor,
        message=f"severity {incident.severity} -> {severity}" + (f" {by}" if by else ""),
        data={"from": incident.severity, "to": severity, **data},
        at=at,
    )
    _tell_channels_reached(db_session, incident, severity)


def _tell_channels_reached(db_session: Session, incident: OpenIncident, severity: str) -> None:
    """A channel whose minimum the raised severity reaches for the first time gets the briefing it was
    not sent. Before the first briefing nothing is owed: it is routed by the severity it is stored at."""
    version = db_session.connection().scalar(_LATEST_VERSION, {"incident_id": incident.id})
    if version is None:
        return
    deliveries.owe_newly_reached(
        db_session=db_session,
        incident_id=incident.id,
        service=incident.service,
        was=incident.severity,
        severity=severity,
        event=BRIEFING_STORED,
        data={"version": version},
    )


def _expire_loaded(db_session: Session, incident: OpenIncident) -> None:
    """An incident opened by an earlier alert of the payload is loaded: it reads the new values next."""
    loaded = db_session.identity_map.get(identity_key(Incident, incident.id))
    if loaded is not None:
        db_session.expire(loaded)


_SAME = aliased(Alert)
_ACTIVE_COUNT = select(func.count(Alert.id)).where(
    Alert.incident_id == bindparam("incident_id"),
    Alert.status == "firing",
    ~exists().where(
        _SAME.source == Alert.source,
        _SAME.fingerprint == Alert.fingerprint,
        _SAME.starts_at == Alert.starts_at,
        or_(_SAME.status == "resolved", and_(_SAME.status == "firing", _SAME.id < Alert.id)),
    ),
)


def active_alert_count(*, db_session: Session, incident: Incident) -> int:
    """Firing alerts of the incident that no resolved notice has cleared yet (one indexed query, so a
    large group resolving at once stays linear). An alert re-sent with a worse severity has a row for
    each severity it rose to: it counts once, by its first."""
    return db_session.scalar(_ACTIVE_COUNT, {"incident_id": incident.id}) or 0


def clear(*, db_session: Session, incident: Incident, alert: Alert, actor: str) -> None:
    """A resolved notice is a timeline event, not a resolution: an engineer resolves incidents."""
    now = utcnow()
    incident.updated_at = now
    db_session.flush()
    remaining = active_alert_count(db_session=db_session, incident=incident)
    message = f"{alert.source} alert {alert.alertname} cleared ({alert.fingerprint})"
    if remaining == 0:
        message += "; no alert of this incident is firing"
    add_event(
        db_session=db_session,
        incident=incident,
        kind="alert_cleared",
        actor=actor,
        message=message,
        data={"alert_id": alert.id, "fingerprint": alert.fingerprint, "still_firing": remaining},
        at=now,
    )


def lock(db_session: Session, incident: Incident) -> None:
    """Serialize changes to one incident: a row lock on PostgreSQL, the write lock on SQLite; the
    incident is read again under it, so a change decided on its status sees every change before it.

    Taking it with a write (rather than a read) first means SQLite never has to upgrade a stale read
    snapshot, and concurrent submissions of the same resolve see each other's result.
    """
    db_session.execute(
        update(Incident)
        .where(Incident.id == incident.id)
        .values(updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db_session.refresh(incident)


def acknowledge(*, db_session: Session, incident: Incident, actor: str) -> bool:
    """Mark the incident as being worked on; returns whether anything changed (twice is a no-op). Under
    the incident's lock: an acknowledge racing a resolve on another replica must not reopen it."""
    lock(db_session, incident)
    if incident.status == "resolved":
        raise IncidentError(f"{incident.public_id} is resolved; it cannot be acknowledged")
    if incident.status == "acknowledged":
        return False
    now = utcnow()
    incident.status = "acknowledged"
    incident.acknowledged_at = now
    incident.acknowledged_by = actor
    incident.updated_at = now
    db_session.flush()
    add_event(
        db_session=db_session,
        incident=incident,
        kind="acknowledged",
        actor=actor,
        message=f"acknowledged by {actor}",
        at=now,
    )
    deliveries.owe(
        db_session=db_session,
        incident=incident,
        event=INCIDENT_ACKNOWLEDGED,
        data={"actor": actor, "at": now.isoformat()},
    )
    return True


def list_incidents(
    *,
    db_session: Session,
    status: Sequence[str] = (),
    service: str | None = None,
    severity: str | None = None,
    since: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
    open_first: bool = False,
) -> IncidentPage:
    """Newest first (open ones ahead of resolved with ``open_first``). ``since``: opened (first seen) at or
    after it. Both go by ``first_seen``, not the row's creation: an imported incident's row is new, its
    incident is not. ``severity``: every incident on its level of the ladder, however its alert spelled
    it (``critical`` and ``p1`` both list ``sev1`` and ``disaster``); one no alerting system is known to
    send lists only itself."""
    filters: list[Any] = []
    if status:
        filters.append(Incident.status.in_(list(status)))
    if service:
        filters.append(Incident.service == service)
    if severity:
        filters.append(Incident.severity.in_(_same_level(db_session, severity)))
    if since is not None:
        filters.append(Incident.first_seen >= since)
    total = db_session.scalar(select(func.count(Incident.id)).where(*filters)) or 0
    order: list[Any] = [Incident.first_seen.desc(), Incident.id.desc()]
    if open_first:
        order.insert(0, case((Incident.status.in_(OPEN_STATUSES), 0), else_=1))
    items = db_session.scalars(select(Incident).where(*filters).order_by(*order).limit(limit).offset(offset))
    return IncidentPage(items=list(items), total=total, limit=limit, offset=offset)


def incident_alerts(*, db_session: Session, incident: Incident) -> list[Alert]:
    return list(db_session.scalars(select(Alert).where(Alert.incident_id == incident.id).order_by(Alert.id)))


def newest_alerts(*, db_session: Session, incident: Incident, limit: int) -> AlertWindow:
    """At most ``limit`` of the incident's newest alerts: a storm of thousands stays one bounded read."""
    total = db_session.scalar(select(func.count(Alert.id)).where(Alert.incident_id == incident.id)) or 0
    newest = db_session.scalars(
        select(Alert).where(Alert.incident_id == incident.id).order_by(Alert.id.desc()).limit(limit)
    )
    alerts = list(reversed(list(newest)))
    firing = {a.fingerprint for a in alerts if a.status == "firing"}
    resolved: Iterable[Any] = (
        db_session.execute(
            select(Alert.source, Alert.fingerprint, Alert.starts_at).where(
                Alert.incident_id == incident.id,
                Alert.status == "resolved",
                Alert.fingerprint.in_(sorted(firing)),
            )
        )
        if firing
        else []
    )
    keys = {tuple(row) for row in resolved}
    cleared = {
        a.id for a in alerts if a.status == "firing" and (a.source, a.fingerprint, a.starts_at) in keys
    }
    return AlertWindow(alerts=alerts, total=total, cleared=cleared)


def latest_alert(*, db_session: Session, incident: Incident) -> Alert | None:
    """The most recent alert of the incident: the signal its page leads with."""
    return db_session.scalar(
        select(Alert)
        .where(Alert.incident_id == incident.id)
        .order_by(Alert.received_at.desc(), Alert.id.desc())
        .limit(1)
    )


def first_seen_points(
    *, db_session: Session, public_ids: Sequence[str] | None = None
) -> list[tuple[str, str, datetime]]:
    """(public id, service, first seen) of every incident, or of the given ones: what charts count."""
    query = select(Incident.public_id, Incident.service, Incident.first_seen)
    if public_ids is not None:
        query = query.where(Incident.public_id.in_(list(public_ids)))
    return [(row.public_id, row.service, row.first_seen) for row in db_session.execute(query)]


def distinct_services(*, db_session: Session) -> list[str]:
    return list(db_session.scalars(select(Incident.service).distinct().order_by(Incident.service)))


def _same_level(db_session: Session, severity: str) -> list[str]:
    """The stored severities on ``severity``'s level; an unknown one in any case (intake keeps the alert's
    spelling, and stored it lower-cased before). Read from the severities in use, since a level has more
    spellings than its list names (``SEV-1``, ``sev 1``)."""
    level = level_of(severity)
    found = db_session.scalars(select(Incident.severity).distinct())
    if level is None:
        return [stored for stored in found if stored.casefold() == severity.casefold()]
    return [stored for stored in found if level_of(stored) == level]


def severity_choices(*, db_session: Session) -> list[str]:
    """What the severity filter offers: each level of the ladder some incident is on, by the ladder's word
    and most urgent first, then the severities no alerting system is known to send, once whatever their
    case (the first as stored), alphabetically."""
    found = sorted({level_or_itself(s) for s in db_session.scalars(select(Incident.severity).distinct())})
    once = {choice.casefold(): choice for choice in reversed(found)}
    return sorted(once.values(), key=lambda s: (-rank(s), s))


def timeline(*, db_session: Session, incident: Incident) -> list[IncidentEvent]:
    return list(
        db_session.scalars(
            select(IncidentEvent).where(IncidentEvent.incident_id == incident.id).order_by(IncidentEvent.id)
        )
    )


def public_ids(*, db_session: Session, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = db_session.execute(select(Incident.id, Incident.public_id).where(Incident.id.in_(list(ids))))
    return {row.id: row.public_id for row in rows}


def count_open(*, db_session: Session) -> int:
    return db_session.scalar(select(func.count(Incident.id)).where(Incident.status.in_(OPEN_STATUSES))) or 0
