"""Resolving, editing and correcting incidents: the gated write to memory.

Each function changes the incident, its timeline and the memory outbox in the caller's transaction, so
either all of it is committed or none of it is. The memory write itself happens later, in the worker
(see ``incidents.resolution.outbox``); here it is only owed.

Documents in memory: an incident's record uses the incident's public id as its document id, so an edit
or a correction re-syncs the same document instead of adding one. A correction is also retained as a
document of its own, ``<incident id>-correction-<n>``, tagged ``kind:correction`` and linked to the
incident through its payload (``corrects``). Every write of a seeded or imported incident's record
carries where it came from (``incidents.history.provenance``), as its first write did.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.alerts.normalized import SEVERITY_UNKNOWN
from incidents.delivery import outbox as deliveries
from incidents.delivery.routing import INCIDENT_RESOLVED
from incidents.history import provenance
from incidents.incident.models import Incident
from incidents.incident.service import add_event, lock
from incidents.resolution import outbox
from incidents.resolution.models import (
    TEMPLATE,
    Correction,
    OutboxEntry,
    Resolution,
    ResolutionFields,
    ResolutionUpdate,
)
from incidents.timeutil import utcnow
from memory.schema import IncidentRecord

MemoryState = Literal["pending", "synced", "failing"]


class ResolutionConflict(Exception):
    """The incident is not in a state that allows this change; the message says why."""


class HistoryProtected(PermissionError):
    """An edit of imported or seeded history by a caller without the right to rewrite it (a tool of the
    resolution conversation reports it as not permitted)."""


@dataclass(frozen=True)
class ResolveResult:
    resolution: Resolution
    created: bool  # False when the same post-mortem had already been submitted


@dataclass(frozen=True)
class MemoryStatus:
    """What the incident page shows about memory: the worst state over the incident's documents."""

    state: MemoryState
    documents: int
    attempts: int
    last_error: str | None
    next_attempt_at: datetime | None
    synced_at: datetime | None


def correction_document_id(incident: Incident, correction: Correction) -> str:
    return f"{incident.public_id}-correction-{correction.id}"


def get_resolution(*, db_session: Session, incident_id: int) -> Resolution | None:
    return db_session.scalars(select(Resolution).where(Resolution.incident_id == incident_id)).one_or_none()


def list_corrections(*, db_session: Session, incident_id: int) -> list[Correction]:
    return list(
        db_session.scalars(
            select(Correction).where(Correction.incident_id == incident_id).order_by(Correction.id)
        )
    )


def resolve(
    *, db_session: Session, incident: Incident, fields: ResolutionFields, actor: str
) -> ResolveResult:
    """Resolve with the post-mortem. a repeat is a no-op, a different one conflicts."""
    lock(db_session, incident)
    existing = get_resolution(db_session=db_session, incident_id=incident.id)
    if existing is not None:
        if _template(existing) == fields.model_dump():
            return ResolveResult(resolution=existing, created=False)
        raise ResolutionConflict(
            f"{incident.public_id} is already resolved (version {existing.version}); edit the resolution"
        )
    now = utcnow()
    resolution = Resolution(
        incident_id=incident.id,
        resolved_by=actor,
        version=1,
        created_at=now,
        updated_at=now,
        **fields.model_dump(),
    )
    db_session.add(resolution)
    incident.status = "resolved"
    incident.resolved_at = now
    incident.resolved_by = actor
    db_session.flush()
    add_event(
        db_session=db_session,
        incident=incident,
        kind="resolved",
        actor=actor,
        message=f"Resolved by {actor}: {resolution.root_cause[:200]}",
        data={"version": 1},
    )
    owe_record(db_session, incident, resolution)
    deliveries.owe(
        db_session=db_session,
        incident=incident,
        event=INCIDENT_RESOLVED,
        data={"actor": actor, "at": now.isoformat(), "root_cause": resolution.root_cause[:300]},
    )
    return ResolveResult(resolution=resolution, created=True)


def update_resolution(
    *,
    db_session: Session,
    incident: Incident,
    changes: ResolutionUpdate,
    actor: str,
    rewrite_history: bool = False,
) -> Resolution:
    """Edit the post-mortem: a new version, the same memory document re-synced, a line on the timeline.

    Imported and seeded history is rewritten only with ``rewrite_history`` (the ``history:replace``
    right, as for an import with ``--replace``), and its timeline line keeps the values it replaced."""
    lock(db_session, incident)
    resolution = get_resolution(db_session=db_session, incident_id=incident.id)
    if resolution is None:
        raise ResolutionConflict(f"{incident.public_id} has no resolution to edit; resolve it first")
    changed = {
        name: value
        for name, value in changes.model_dump(exclude_none=True).items()
        if getattr(resolution, name) != value
    }
    if not changed:
        return resolution
    history = incident.origin != "alert"
    if history and not rewrite_history:
        raise HistoryProtected(
            f"{incident.public_id} is history ({incident.origin}); "
            "rewriting it needs the history:replace scope"
        )
    fields = sorted(changed)
    previous = {name: getattr(resolution, name) for name in fields}
    for name, value in changed.items():
        setattr(resolution, name, value)
    resolution.version += 1
    resolution.updated_at = utcnow()
    db_session.flush()
    data: dict[str, object] = {"version": resolution.version, "fields": fields}
    what = "History record" if history else "Resolution"
    add_event(
        db_session=db_session,
        incident=incident,
        kind="history_updated" if history else "resolution_edited",
        actor=actor,
        message=f"{what} edited by {actor} (version {resolution.version}): {', '.join(fields)}",
        data={"origin": "edit", **data, "previous": previous} if history else data,
    )
    owe_record(db_session, incident, resolution)
    return resolution


@dataclass(frozen=True)
class Corrected:
    correction: Correction
    created: bool  # False: the same text already corrected this incident, and nothing was added


def add_correction(*, db_session: Session, incident: Incident, text: str, actor: str) -> Corrected:
    """Attach a correction: retained as its own ``kind:correction`` document, and the record re-synced.
    The same text again (a double click, a retried request) adds nothing: memory would otherwise hold,
    and briefings show, the one correction twice."""
    lock(db_session, incident)
    if incident.status != "resolved":
        raise ResolutionConflict(f"{incident.public_id} is not resolved; corrections are for past incidents")
    said = " ".join(text.split())
    for earlier in list_corrections(db_session=db_session, incident_id=incident.id):
        if " ".join(earlier.text.split()) == said:
            return Corrected(earlier, created=False)
    correction = Correction(incident_id=incident.id, text=text, author=actor, created_at=utcnow())
    db_session.add(correction)
    db_session.flush()
    document_id = correction_document_id(incident, correction)
    outbox.enqueue(
        db_session=db_session,
        incident_id=incident.id,
        document_id=document_id,
        kind="correction",
        payload=correction_payload(incident, correction, document_id),
    )
    resolution = get_resolution(db_session=db_session, incident_id=incident.id)
    if resolution is not None:
        owe_record(db_session, incident, resolution)
    add_event(
        db_session=db_session,
        incident=incident,
        kind="correction_added",
        actor=actor,
        message=f"Correction by {actor}: {text[:200]}",
        data={"correction_id": correction.id, "document_id": document_id},
    )
    return Corrected(correction, created=True)


def memory_status(*, db_session: Session, incident_id: int) -> MemoryState | None:
    """pending | synced | failing for the incident's memory writes, None if it never owed any."""
    detail = memory_detail(db_session=db_session, incident_id=incident_id)
    return None if detail is None else detail.state


def memory_detail(*, db_session: Session, incident_id: int) -> MemoryStatus | None:
    entries = list(db_session.scalars(select(OutboxEntry).where(OutboxEntry.incident_id == incident_id)))
    if not entries:
        return None
    open_entries = [e for e in entries if e.state != "synced"]
    failing = [e for e in open_entries if e.state == "failing"]
    state: MemoryState = "failing" if failing else "pending" if open_entries else "synced"
    worst = failing or open_entries
    synced = [e.synced_at for e in entries if e.synced_at is not None]
    return MemoryStatus(
        state=state,
        documents=len({e.document_id for e in entries}),
        attempts=max((e.attempts for e in worst), default=0),
        last_error=next((e.last_error for e in worst if e.last_error), None),
        next_attempt_at=min((e.next_attempt_at for e in worst), default=None),
        synced_at=max(synced, default=None),
    )


def record_payload(
    incident: Incident, resolution: Resolution, corrections: list[Correction]
) -> dict[str, Any]:
    """Everything the worker needs to build the labeled record, frozen at the time of the change."""
    return {
        "record": {
            "incident_id": incident.public_id,
            "service": incident.service,
            "timestamp": incident.first_seen.isoformat(),
            **_template(resolution),
            "resolved_by": resolution.resolved_by,
        },
        "severity": incident.severity,
        "title": incident.title,
        "version": resolution.version,
        "corrections": [
            {
                "document_id": correction_document_id(incident, c),
                "text": c.text,
                "author": c.author,
                "created_at": c.created_at.isoformat(),
            }
            for c in corrections
        ],
    }


def payload_record(payload: dict[str, Any]) -> IncidentRecord:
    """The labeled record a ``record_payload`` describes, as the worker retains it."""
    fields = dict(payload["record"])
    fields["timestamp"] = datetime.fromisoformat(fields["timestamp"])
    return IncidentRecord(**fields)


def correction_payload(incident: Incident, correction: Correction, document_id: str) -> dict[str, Any]:
    return {
        "correction": {
            "document_id": document_id,
            "corrects": incident.public_id,
            "service": incident.service,
            "severity": incident.severity,
            "text": correction.text,
            "author": correction.author,
            "created_at": correction.created_at.isoformat(),
        }
    }


def owe_record(db_session: Session, incident: Incident, resolution: Resolution) -> OutboxEntry:
    """Owe memory the incident's current record; history keeps its origin, and no severity tag when it
    was loaded without one."""
    corrections = list_corrections(db_session=db_session, incident_id=incident.id)
    payload = record_payload(incident, resolution, corrections)
    history = provenance(db_session=db_session, incident=incident)
    if history:
        payload["history"] = history
        if incident.severity == SEVERITY_UNKNOWN:
            payload["severity"] = None
    return outbox.enqueue(
        db_session=db_session,
        incident_id=incident.id,
        document_id=incident.public_id,
        kind="incident",
        payload=payload,
    )


def _template(resolution: Resolution) -> dict[str, str]:
    return {name: getattr(resolution, name) for name in TEMPLATE}
