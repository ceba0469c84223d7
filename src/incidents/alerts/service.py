"""Alert intake: store each normalized alert once and route it to exactly one incident.

Idempotency key: source + fingerprint + status + starts_at. The row is inserted with
``ON CONFLICT DO NOTHING``, so a redelivered payload (Alertmanager retries after errors) and two
deliveries racing each other both end as one row, and routing runs only for the one that inserted it.
Concurrent intake of one group is ordered by the database: a transaction-scoped advisory lock per
group on PostgreSQL, a single writer on SQLite (``incidents.locking``).
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from incidents.alerts.models import Alert
from incidents.alerts.normalized import NormalizedAlert
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.incident.service import GroupKey
from incidents.timeutil import utcnow

Outcome = Literal["stored", "duplicate"]


@dataclass(frozen=True)
class IngestResult:
    fingerprint: str
    status: str
    outcome: Outcome
    incident: str | None  # public id, when the alert belongs to one
    opened: bool  # this alert opened the incident


def idempotency_key(source: str, fingerprint: str, status: str, starts_at: datetime) -> str:
    return f"{source}|{fingerprint}|{status}|{starts_at.isoformat()}"


def group_of(alert: NormalizedAlert) -> GroupKey:
    return GroupKey(service=alert.service, alertname=alert.alertname, dedup_key=alert.dedup_key)


def ingest(*, db_session: Session, alerts: Sequence[NormalizedAlert], via: str) -> list[IngestResult]:
    """Store and route a payload's alerts, in order. ``via`` names the sender's token for the timeline."""
    _lock_groups(db_session, alerts)
    return [_ingest_one(db_session, alert, via) for alert in alerts]


def _lock_groups(db_session: Session, alerts: Sequence[NormalizedAlert]) -> None:
    if db_session.get_bind().dialect.name != "postgresql":
        return
    # Sorted, so two payloads touching the same groups always lock in the same order (no deadlock).
    for name in sorted({group_of(alert).lock_name for alert in alerts}):
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        db_session.execute(select(func.pg_advisory_xact_lock(key)))


def _anchor(db_session: Session, alert: NormalizedAlert) -> datetime:
    """The start of the episode an event without a start time belongs to.

    A trigger while the fingerprint's last event is not a resolution repeats the open episode (so it
    is a duplicate); acknowledge and resolve belong to the last episode; anything else starts now.
    """
    latest = db_session.execute(
        select(Alert.status, Alert.starts_at)
        .where(Alert.source == alert.source, Alert.fingerprint == alert.fingerprint)
        .order_by(Alert.id.desc())
        .limit(1)
    ).first()
    if latest is None or (alert.status == "firing" and latest.status == "resolved"):
        return utcnow()
    return latest.starts_at


def _insert(db_session: Session, alert: NormalizedAlert, key: str, starts_at: datetime) -> int | None:
    if db_session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as dialect_insert
    else:
        from sqlalchemy.dialects.sqlite import insert as dialect_insert
    statement = (
        dialect_insert(Alert)
        .values(
            idempotency_key=key,
            source=alert.source,
            fingerprint=alert.fingerprint,
            status=alert.status,
            alertname=alert.alertname,
            service=alert.service,
            severity=alert.severity,
            summary=alert.summary,
            description=alert.description,
            labels=alert.labels,
            annotations=alert.annotations,
            starts_at=starts_at,
            ends_at=alert.ends_at,
            generator_url=alert.generator_url,
            runbook_url=alert.runbook_url,
            dedup_key=alert.dedup_key,
            raw_payload=alert.raw,
            received_at=utcnow(),
        )
        .on_conflict_do_nothing(index_elements=["idempotency_key"])
        .returning(Alert.id)
    )
    return db_session.scalar(statement)


def _ingest_one(db_session: Session, alert: NormalizedAlert, via: str) -> IngestResult:
    starts_at = alert.starts_at or _anchor(db_session, alert)
    key = idempotency_key(alert.source, alert.fingerprint, alert.status, starts_at)
    alert_id = _insert(db_session, alert, key, starts_at)
    if alert_id is None:
        existing = db_session.scalar(select(Alert.incident_id).where(Alert.idempotency_key == key))
        known = incidents.public_ids(db_session=db_session, ids=[existing] if existing else [])
        return IngestResult(alert.fingerprint, alert.status, "duplicate", known.get(existing or 0), False)
    row = db_session.get_one(Alert, alert_id)
    actor = f"{alert.source} ({via})"
    incident, opened = _route(db_session, row, group_of(alert), actor, via)
    if incident is not None:
        row.incident_id = incident.id
        db_session.flush()
    return IngestResult(
        alert.fingerprint, alert.status, "stored", incident.public_id if incident else None, opened
    )


def _route(
    db_session: Session, alert: Alert, group: GroupKey, actor: str, via: str
) -> tuple[Incident | None, bool]:
    if alert.status == "firing":
        incident = incidents.find_open(db_session=db_session, group=group)
        if incident is None:
            return incidents.open_incident(db_session=db_session, alert=alert, group=group, actor=actor), True
        incidents.join(db_session=db_session, incident=incident, alert=alert, actor=actor)
        return incident, False
    incident = _incident_of_episode(db_session, alert, group)
    if incident is None:
        return None, False
    alert.incident_id = incident.id
    db_session.flush()
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
    return incident, False


def _incident_of_episode(db_session: Session, alert: Alert, group: GroupKey) -> Incident | None:
    """Where a resolve or acknowledge belongs: the incident its firing alert joined, else the group's
    open incident, else the group's latest one. A notice for something never seen stays unattached."""
    firing_key = idempotency_key(alert.source, alert.fingerprint, "firing", alert.starts_at)
    incident_id = db_session.scalar(select(Alert.incident_id).where(Alert.idempotency_key == firing_key))
    if incident_id is not None:
        return db_session.get(Incident, incident_id)
    return incidents.find_open(db_session=db_session, group=group) or incidents.find_latest(
        db_session=db_session, group=group
    )
