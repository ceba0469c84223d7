"""Alert intake: store each normalized alert once and route it to exactly one incident.

Idempotency key: source + fingerprint + status + starts_at (+ the severity, for a firing alert sent again
worse than it was, see ``_escalated``). The row is inserted with
``ON CONFLICT DO NOTHING``, so a redelivered payload (Alertmanager retries after errors) and two
deliveries racing each other both end as one row, and routing runs only for the one that inserted it.
Concurrent intake of one group is ordered by the database: a transaction-scoped advisory lock per
group on PostgreSQL, a single writer on SQLite (``incidents.locking``).
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from typing import Any, Literal

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from incidents.alerts.models import Alert
from incidents.alerts.normalized import SERVICE_UNKNOWN, NormalizedAlert
from incidents.database import insert_ignoring_conflicts, table_of
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.incident.service import GroupKey, OpenIncident
from incidents.locking import advisory_lock
from incidents.severity import outranks, worst
from incidents.timeutil import utcnow

# stored: a new alert; escalated: a firing alert sent again with a worse severity than it had, stored
# again with it; duplicate: a repeat that changed nothing.
Outcome = Literal["stored", "escalated", "duplicate"]


@dataclass(frozen=True)
class IngestResult:
    fingerprint: str
    status: str
    outcome: Outcome
    incident: str | None  # public id, when the alert belongs to one
    opened: bool  # this alert opened the incident
    severity: str  # as this delivery gave it
    previous_severity: str | None = None  # escalated: the worst the alert was stored with before


def idempotency_key(source: str, fingerprint: str, status: str, starts_at: datetime) -> str:
    return f"{source}|{fingerprint}|{status}|{starts_at.isoformat()}"


def group_of(alert: NormalizedAlert) -> GroupKey:
    return GroupKey(service=alert.service, alertname=alert.alertname, dedup_key=alert.dedup_key)


def ingest(*, db_session: Session, alerts: Sequence[NormalizedAlert], via: str) -> list[IngestResult]:
    """Store and route a payload's alerts, in order. ``via`` names the sender's token for the timeline."""
    _lock_groups(db_session, alerts)
    return [_ingest_one(db_session, alert, via) for alert in alerts]


def _lock_groups(db_session: Session, alerts: Sequence[NormalizedAlert]) -> None:
    # Sorted, so two payloads touching the same groups always lock in the same order (no deadlock).
    for name in sorted({group_of(alert).lock_name for alert in alerts}):
        advisory_lock(db_session, name)


_ALERTS = table_of(Alert)
_LATEST_OF_FINGERPRINT = (
    select(Alert.status, Alert.starts_at, Incident.status.label("incident_status"))
    .outerjoin(Incident, Incident.id == Alert.incident_id)
    .where(Alert.source == bindparam("source"), Alert.fingerprint == bindparam("fingerprint"))
    .order_by(Alert.id.desc())
    .limit(1)
)
_INCIDENT_OF_KEY = select(Alert.incident_id).where(Alert.idempotency_key == bindparam("key"))
_ALERT_OF_KEY = select(_ALERTS.c.id).where(_ALERTS.c.idempotency_key == bindparam("key"))
_UNATTACHED_OF_KEY = _ALERT_OF_KEY.where(_ALERTS.c.incident_id.is_(None))
_PUBLIC_ID_OF_KEY = (
    select(Incident.public_id)
    .join_from(Alert, Incident, Alert.incident_id == Incident.id)
    .where(Alert.idempotency_key == bindparam("key"))
)
_EPISODE = (
    select(
        Alert.severity,
        Alert.incident_id,
        Incident.public_id,
        Incident.status.label("incident_status"),
        Incident.severity.label("incident_severity"),
        Incident.service.label("incident_service"),
    )
    .join_from(Alert, Incident, Alert.incident_id == Incident.id)
    .where(
        Alert.source == bindparam("source"),
        Alert.fingerprint == bindparam("fingerprint"),
        Alert.status == "firing",
        Alert.starts_at == bindparam("starts_at"),
    )
    .order_by(Alert.id)
)
_LINK = (
    update(_ALERTS).where(_ALERTS.c.id == bindparam("alert_id")).values(incident_id=bindparam("incident_id"))
)


@cache
def _insert_statement(dialect: str) -> Any:
    """``INSERT ... ON CONFLICT (idempotency_key) DO NOTHING RETURNING id``, built once per dialect."""
    return insert_ignoring_conflicts(dialect, _ALERTS, ["idempotency_key"]).returning(_ALERTS.c.id)


def _anchor(db_session: Session, alert: NormalizedAlert) -> datetime:
    """The start of the episode an event without a start time, or keyed by a dedup key, belongs to.

    PagerDuty's ``timestamp`` is when an event was sent, not which episode it is (the dedup key says
    that): a repeated trigger with a new timestamp is the same event, stored once.

    A trigger while the fingerprint's last event is not a resolution, and its incident is not resolved,
    repeats the open episode (so it is a duplicate); acknowledge and resolve belong to the last episode;
    anything else starts at the event's own start time, else now. An engineer's resolution ends the
    episode as the source's resolve does: a sender that never sends one (a script, a PagerDuty client
    whose incident was closed here) would otherwise have every later trigger swallowed as a repeat of
    an incident already resolved.
    """
    latest = db_session.execute(
        _LATEST_OF_FINGERPRINT, {"source": alert.source, "fingerprint": alert.fingerprint}
    ).first()
    if latest is None or (alert.status == "firing" and "resolved" in (latest.status, latest.incident_status)):
        return alert.starts_at or utcnow()
    starts_at: datetime = latest.starts_at
    return starts_at


def _insert(
    db_session: Session, alert: NormalizedAlert, key: str, starts_at: datetime, incident_id: int | None
) -> int | None:
    params = {
        "idempotency_key": key,
        "source": alert.source,
        "fingerprint": alert.fingerprint,
        "status": alert.status,
        "alertname": alert.alertname,
        "service": alert.service,
        "severity": alert.severity,
        "summary": alert.summary,
        "description": alert.description,
        "labels": alert.labels,
        "annotations": alert.annotations,
        "starts_at": starts_at,
        "ends_at": alert.ends_at,
        "generator_url": alert.generator_url,
        "runbook_url": alert.runbook_url,
        "dedup_key": alert.dedup_key,
        "raw_payload": alert.raw,
        "received_at": utcnow(),
        "incident_id": incident_id,
    }
    connection = db_session.connection()
    inserted: int | None = connection.scalar(_insert_statement(connection.dialect.name), params)
    return inserted


def _ingest_one(db_session: Session, alert: NormalizedAlert, via: str) -> IngestResult:
    """Find where the alert belongs (reads only), then insert it there; routing writes happen only
    when the insert was not a duplicate, so a redelivery leaves no trace, unless it comes with a worse
    severity (generic and PagerDuty senders escalate so): see ``_escalated``."""
    if alert.starts_at is not None and alert.dedup_key is None:
        starts_at = alert.starts_at
    else:
        starts_at = _anchor(db_session, alert)
    key = idempotency_key(alert.source, alert.fingerprint, alert.status, starts_at)
    group = group_of(alert)
    incident: Incident | OpenIncident | None
    if alert.status == "firing":
        incident = incidents.find_open(db_session=db_session, group=group)
    else:
        incident = _incident_of_episode(db_session, alert, starts_at, group)
        alert = _described_by(alert, incident)
    actor = f"{alert.source} ({via})"
    alert_id = _insert(db_session, alert, key, starts_at, incident.id if incident else None)
    if alert_id is None:
        was = _escalated(db_session, alert, key, starts_at, actor) if alert.status == "firing" else None
        known = db_session.connection().scalar(_PUBLIC_ID_OF_KEY, {"key": key})
        return IngestResult(
            alert.fingerprint,
            alert.status,
            "duplicate" if was is None else "escalated",
            known,
            opened=False,
            severity=alert.severity,
            previous_severity=was,
        )
    row = _stored(alert, alert_id, starts_at, incident.id if incident else None)
    opened = False
    if alert.status == "firing" and incident is None:
        incident = incidents.open_incident(db_session=db_session, alert=row, group=group, actor=actor)
        db_session.execute(_LINK, {"alert_id": alert_id, "incident_id": incident.id})
        opened = True
    elif isinstance(incident, OpenIncident):
        incidents.join(db_session=db_session, incident=incident, alert=row, actor=actor)
    elif incident is not None:
        _notice(db_session, incident, row, actor, via)
    if opened and isinstance(incident, Incident):
        _cleared_before(db_session, alert, starts_at, incident, actor)
    return IngestResult(
        alert.fingerprint,
        alert.status,
        "stored",
        incident.public_id if incident else None,
        opened,
        severity=alert.severity,
    )


def _stored(alert: NormalizedAlert, alert_id: int, starts_at: datetime, incident_id: int | None) -> Alert:
    """A transient row (never added to the session) that carries the stored values to the incident
    service."""
    return Alert(
        id=alert_id,
        source=alert.source,
        fingerprint=alert.fingerprint,
        status=alert.status,
        alertname=alert.alertname,
        service=alert.service,
        severity=alert.severity,
        summary=alert.summary,
        starts_at=starts_at,
        incident_id=incident_id,
    )


def _escalated(
    db_session: Session, alert: NormalizedAlert, key: str, starts_at: datetime, actor: str
) -> str | None:
    """A firing alert stored before, sent again: with a severity worse than every one it was stored with,
    while its incident is open, it is stored once more with it (keyed by it, so that repeat in turn is a
    duplicate) and its incident is told; returns the worst severity it had before. Otherwise it is the
    duplicate it looks like (None). A resolved incident's record stays as the engineer closed it, and an
    alert whose resolved notice came already is over: a firing delivery of it now is a late retry."""
    connection = db_session.connection()
    episode = {"source": alert.source, "fingerprint": alert.fingerprint, "starts_at": starts_at}
    rows = connection.execute(_EPISODE, episode).all()
    if not rows or rows[0].incident_status not in incidents.OPEN_STATUSES:
        return None
    was = worst(row.severity for row in rows)
    if not outranks(alert.severity, was):
        return None
    cleared = idempotency_key(alert.source, alert.fingerprint, "resolved", starts_at)
    if connection.scalar(_ALERT_OF_KEY, {"key": cleared}) is not None:
        return None
    first = rows[0]
    alert_id = _insert(db_session, alert, f"{key}|{alert.severity}", starts_at, first.incident_id)
    if alert_id is None:
        return None
    incident = OpenIncident(
        id=first.incident_id,
        public_id=first.public_id,
        severity=first.incident_severity,
        service=first.incident_service,
    )
    row = _stored(alert, alert_id, starts_at, first.incident_id)
    incidents.escalate(db_session=db_session, incident=incident, alert=row, was=was, actor=actor)
    return was


def _cleared_before(
    db_session: Session, alert: NormalizedAlert, starts_at: datetime, incident: Incident, actor: str
) -> None:
    """A resolved notice that arrived before its firing alert (a sender retrying out of order) was
    kept unattached: it now clears the alert on the incident the firing one opened, as it would have.
    Only an opening alert can have one: a notice of a group with an incident was attached to it."""
    key = idempotency_key(alert.source, alert.fingerprint, "resolved", starts_at)
    early_id = db_session.connection().scalar(_UNATTACHED_OF_KEY, {"key": key})
    if early_id is None:  # nearly always: one indexed lookup, no objects loaded
        return
    early = db_session.get(Alert, early_id)
    if early is None:
        return
    early.incident_id = incident.id
    incidents.clear(db_session=db_session, incident=incident, alert=early, actor=actor)


def _notice(db_session: Session, incident: Incident, alert: Alert, actor: str, via: str) -> None:
    """A resolve clears the alert on the incident's timeline; an acknowledge acknowledges it."""
    if alert.status == "resolved":
        incidents.clear(db_session=db_session, incident=incident, alert=alert, actor=actor)
    elif incident.status == "triggered":
        incidents.acknowledge(db_session=db_session, incident=incident, actor=actor)
    else:
        incidents.add_event(
            db_session=db_session,
            incident=incident,
            kind="source_acknowledged",
            actor=actor,
            message=f"{alert.source} acknowledged {alert.fingerprint}; incident already {incident.status}",
            data={"alert_id": alert.id, "via": via},
        )


def _described_by(alert: NormalizedAlert, incident: Incident | None) -> NormalizedAlert:
    """A PagerDuty acknowledge or resolve names only its dedup key: it is stored under the service
    and alert name of the incident it belongs to, so the timeline says what was cleared."""
    if incident is None or not alert.dedup_key or alert.service != SERVICE_UNKNOWN or alert.labels:
        return alert
    return replace(
        alert,
        service=incident.service,
        alertname=incident.alertname,
        severity=incident.severity,
        summary=incident.title,
    )


def _incident_of_episode(
    db_session: Session, alert: NormalizedAlert, starts_at: datetime, group: GroupKey
) -> Incident | None:
    """Where a resolve or acknowledge belongs: the incident its firing alert joined, else the group's
    open incident, else the group's latest one. A notice for something never seen stays unattached."""
    firing_key = idempotency_key(alert.source, alert.fingerprint, "firing", starts_at)
    incident_id = db_session.scalar(_INCIDENT_OF_KEY, {"key": firing_key})
    if incident_id is None:
        found = incidents.find_open(db_session=db_session, group=group)
        incident_id = found.id if found else None
    if incident_id is not None:
        return db_session.get(Incident, incident_id)
    return incidents.find_latest(db_session=db_session, group=group)
