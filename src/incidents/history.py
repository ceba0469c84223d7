"""Resolved incidents that happened before RecallOps: seeded or imported post-mortems.

They get a real incident row (``origin`` ``seed`` or ``import``, status resolved, the post-mortem's own
id as ``public_id``), a resolution and a timeline line, so their record pages open like any other.
Writing the same history again changes nothing; writing other content under a known id is a
rewrite, done only when asked for (``replace``), and the timeline keeps the version it replaced.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.drafts.models import Draft
from incidents.incident.models import Incident, IncidentEvent
from incidents.incident.service import add_event, get_by_public_id
from incidents.resolution.models import TEMPLATE, Resolution
from memory.history import HistoryRow

Origin = Literal["seed", "import"]
ORIGINS: tuple[Origin, ...] = ("seed", "import")
Outcome = Literal["imported", "updated", "unchanged"]
# The incident's columns an import row sets from a field named otherwise: a refused rewrite names what
# the row changes by the row's own words (its one ``timestamp``, not the three times it is kept as).
_ROW_FIELDS = {"first_seen": "timestamp", "last_seen": "timestamp", "resolved_at": "timestamp"}


class HistoryConflict(Exception):
    """The row cannot be history: its id belongs to an incident RecallOps opened from an alert (or to
    a record that is not an incident), or it would rewrite history without ``replace``. (A timestamp
    before 1970 or more than a day ahead never gets here: the import row refuses it.)"""


@dataclass(frozen=True)
class HistoricalIncident:
    public_id: str
    service: str
    title: str
    severity: str
    timestamp: datetime
    template: dict[str, str]  # the labeled template's text fields, by name
    resolved_by: str


def historical(row: HistoryRow) -> HistoricalIncident:
    """A valid import row as the incident store keeps it."""
    record = row.record()
    return HistoricalIncident(
        public_id=record.incident_id,
        service=record.service,
        title=row.display_title(),
        severity=row.severity.lower(),
        timestamp=record.timestamp,
        template={name: getattr(record, name) for name in TEMPLATE},
        resolved_by=record.resolved_by,
    )


def upsert_historical(
    *, db_session: Session, history: HistoricalIncident, origin: Origin, actor: str, replace: bool
) -> Outcome:
    """Create the incident, its resolution and its timeline, or (``replace``) rewrite them, keeping
    the replaced values in the timeline line; flush, never commit."""
    incident = get_by_public_id(db_session=db_session, public_id=history.public_id)
    if incident is not None and incident.origin not in ORIGINS:
        raise HistoryConflict(
            f"{history.public_id} is a live incident opened from an alert; choose another id"
        )
    if incident is None:
        incident = Incident(
            public_id=history.public_id,
            title=history.title,
            service=history.service,
            alertname=history.title[:255],
            severity=history.severity,
            status="resolved",
            origin=origin,
            alert_count=0,
            first_seen=history.timestamp,
            last_seen=history.timestamp,
            resolved_at=history.timestamp,
            resolved_by=history.resolved_by or actor,
        )
        db_session.add(incident)
        db_session.flush()
        db_session.add(Resolution(incident_id=incident.id, **_resolution_columns(history, actor)))
        add_event(
            db_session=db_session,
            incident=incident,
            kind="imported",
            actor=actor,
            message=f"Resolved incident from history ({origin})",
            data={"origin": origin},
        )
        db_session.flush()
        return "imported"
    resolution = db_session.scalar(select(Resolution).where(Resolution.incident_id == incident.id))
    # A row that names no resolver says nothing new about who resolved it: the first importer stands.
    resolver = history.resolved_by or incident.resolved_by or actor
    incident_changes = {
        "title": history.title,
        "service": history.service,
        "severity": history.severity,
        "first_seen": history.timestamp,
        "last_seen": history.timestamp,
        "resolved_at": history.timestamp,
        "resolved_by": resolver,
    }
    resolution_changes = _resolution_columns(history, resolver)
    changed = [k for k, v in incident_changes.items() if getattr(incident, k) != v]
    if resolution is None:
        db_session.add(Resolution(incident_id=incident.id, **resolution_changes))
        changed.append("resolution")
    else:
        changed += [k for k, v in resolution_changes.items() if getattr(resolution, k) != v]
    if not changed:
        return "unchanged"
    fields = sorted(set(changed))
    if not replace:
        said = sorted({_ROW_FIELDS.get(name, name) for name in fields})
        raise HistoryConflict(
            f"{history.public_id} is already history and this row changes {', '.join(said)}; "
            "import it with --replace (API: replace=true) to rewrite it"
        )
    previous = {key: _plain(getattr(incident, key)) for key in incident_changes}
    if resolution is not None:
        previous |= {key: getattr(resolution, key) for key in resolution_changes}
    for key, value in incident_changes.items():
        setattr(incident, key, value)
    if resolution is not None:
        for key, value in resolution_changes.items():
            setattr(resolution, key, value)
        resolution.version += 1
    add_event(
        db_session=db_session,
        incident=incident,
        kind="history_updated",
        actor=actor,
        message=f"History record replaced ({origin}): {', '.join(fields)}",
        data={
            "origin": origin,
            "fields": fields,
            "previous": {k: previous[k] for k in fields if k in previous},
        },
    )
    db_session.flush()
    return "updated"


def memory_mark(origin: Origin, imported_by: str) -> dict[str, str]:
    """What memory's metadata says of a history record's origin: ``origin``, and who imported it."""
    return {"origin": origin, "imported_by": imported_by} if origin == "import" else {"origin": origin}


def accepted_for(*, db_session: Session, public_id: str) -> Draft | None:
    """The accepted draft an incident was imported from, if it was: its latest revision."""
    return db_session.scalars(
        select(Draft)
        .where(Draft.incident_id == public_id, Draft.state == "accepted")
        .order_by(Draft.id.desc())
        .limit(1)
    ).one_or_none()


def provenance(*, db_session: Session, incident: Incident) -> dict[str, str]:
    """The origin a history record was loaded with, for every later write of it to memory (an edit, a
    correction), so a bank's reader still sees seeded or imported history: ``memory_mark``, and for
    an accepted draft its file and who accepted it. Empty for an incident opened from an alert."""
    if incident.origin not in ORIGINS:
        return {}
    draft = accepted_for(db_session=db_session, public_id=incident.public_id)
    if draft is not None:
        return memory_mark("import", draft.imported_by) | {
            "accepted_by": draft.decided_by or "",
            "source": draft.source_name,
        }
    loads = db_session.scalars(
        select(IncidentEvent)
        .where(
            IncidentEvent.incident_id == incident.id,
            IncidentEvent.kind.in_(("imported", "history_updated")),
        )
        .order_by(IncidentEvent.id.desc())
    )
    # the latest load or ``replace`` of the history names who imported it (an edit says "edit")
    actor = next((e.actor for e in loads if (e.data or {}).get("origin") in ORIGINS), "")
    return memory_mark("import" if incident.origin == "import" else "seed", actor)


def _plain(value: object) -> object:
    """A column value as JSON keeps it: times as ISO text."""
    return value.isoformat() if isinstance(value, datetime) else value


def _resolution_columns(history: HistoricalIncident, resolver: str) -> dict[str, str]:
    """``resolver``: who resolved it when the row does not say."""
    return {
        **{name: history.template.get(name, "") for name in TEMPLATE},
        "resolved_by": history.resolved_by or resolver,
    }
