"""Reading and deciding drafts: the gated write of imported history, as ``log_incident`` is for the agent.

Nothing reaches memory until a person accepts a draft. Accepting validates the draft's row like any
history import row (``memory.history.HistoryRow``), writes the resolved incident, its resolution and
timeline (``incidents.history``) and owes memory the labeled record through the memory outbox, all in
the caller's transaction; the record carries its source file and who imported and accepted it.
Rejecting keeps the draft with the reason, so the same document read again stays decided. A draft
that revises an incident (``incidents.drafts.revisions``) replaces that incident's post-mortem when
accepted, through the same edit a resolved incident's record takes.
"""

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from incidents.drafts.models import Draft, DraftState
from incidents.field_errors import errors_by_field
from incidents.history import HistoricalIncident, HistoryConflict, historical, upsert_historical
from incidents.incident.models import Incident
from incidents.incident.service import add_event, get_by_public_id
from incidents.resolution.models import Resolution, ResolutionUpdate
from incidents.resolution.service import (
    ResolutionConflict,
    get_resolution,
    owe_record,
    update_resolution,
)
from incidents.timeutil import utcnow
from memory.extraction.extract import REQUIRED as TEMPLATE_REQUIRED
from memory.history import HistoryRow
from memory.template import FIELDS

# The drafted fields in the order a reviewer reads them: what the import row carries beside the template.
DRAFTED = ("title", "service", *(f.name for f in FIELDS))
# What a draft needs before it is accepted (``HistoryRow``): a service to file it under, and the
# post-mortem's required fields.
REQUIRED = ("service", *TEMPLATE_REQUIRED)


def missing_of(fields: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The required fields a draft's values leave empty, in ``REQUIRED`` order."""
    return [name for name in REQUIRED if not _text(fields, name).strip()]


MAX_REASON = 2000


class DraftRefused(Exception):
    """The draft cannot be decided this way; ``reasons`` say what to fix, ``by_field`` what is wrong
    with which field when that is why (a page names the field by its label)."""

    def __init__(self, reasons: list[str], by_field: Mapping[str, str] | None = None) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons
        self.by_field = dict(by_field or {})

    @classmethod
    def fields(cls, by_field: Mapping[str, str]) -> "DraftRefused":
        return cls([f"{name}: {problem}" for name, problem in by_field.items()], by_field)


class FieldRefused(DraftRefused):
    """An edit names a field drafts do not have, or gives one a value it cannot hold: the request is
    wrong, not the draft's state (each reason starts with the field's name)."""


@dataclass(frozen=True)
class NewDraft:
    content_hash: str
    source_name: str
    source_kind: str
    source_text: str
    source_meta: Mapping[str, str]
    incident_id: str
    fields: Mapping[str, Any]  # name -> {"value", "spans", "origin"}
    missing: tuple[str, ...]
    fill_rate: float
    near_duplicate: str | None
    revises: str | None = None
    revision_reason: str | None = None


def known_hashes(*, db_session: Session, hashes: Iterable[str]) -> set[str]:
    """Which of these documents were drafted before (whatever was decided about them)."""
    wanted = list(set(hashes))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        found.update(db_session.scalars(select(Draft.content_hash).where(Draft.content_hash.in_(chunk))))
    return found


def pending_ids(*, db_session: Session, hashes: Iterable[str]) -> list[int]:
    """The pending drafts of these documents, oldest first."""
    wanted = list(set(hashes))
    found: list[int] = []
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        found.extend(
            db_session.scalars(
                select(Draft.id).where(Draft.content_hash.in_(chunk), Draft.state == "pending")
            )
        )
    return sorted(found)


def add(*, db_session: Session, draft: NewDraft, actor: str) -> Draft:
    row = Draft(
        content_hash=draft.content_hash,
        source_name=draft.source_name[:500],
        source_kind=draft.source_kind,
        source_text=draft.source_text,
        source_meta=dict(draft.source_meta),
        incident_id=draft.incident_id,
        fields=dict(draft.fields),
        missing=list(draft.missing),
        fill_rate=draft.fill_rate,
        near_duplicate=draft.near_duplicate,
        revises=draft.revises,
        revision_reason=draft.revision_reason,
        state="pending",
        imported_by=actor[:255],
        created_at=utcnow(),
    )
    db_session.add(row)
    db_session.flush()
    return row


def get(*, db_session: Session, draft_id: int) -> Draft | None:
    return db_session.get(Draft, draft_id)


def list_drafts(
    *, db_session: Session, state: DraftState | None = None, limit: int = 100, offset: int = 0
) -> list[Draft]:
    query = select(Draft).order_by(Draft.id)
    if state is not None:
        query = query.where(Draft.state == state)
    return list(db_session.scalars(query.limit(limit).offset(offset)))


def counts(*, db_session: Session) -> dict[str, int]:
    found = dict(db_session.execute(select(Draft.state, func.count()).group_by(Draft.state)).all())
    return {state: int(found.get(state, 0)) for state in ("pending", "accepted", "rejected")}


def value(draft: Draft, name: str) -> str:
    return _text(draft.fields, name)


def _text(fields: Mapping[str, Mapping[str, object]], name: str) -> str:
    return str((fields.get(name) or {}).get("value") or "")


def row_of(draft: Draft) -> dict[str, str]:
    """The draft as a history import row (``memory.history.HistoryRow``'s keys)."""
    return _row(draft.fields, draft.incident_id)


def _row(fields: Mapping[str, Mapping[str, object]], incident_id: str) -> dict[str, str]:
    row = {name: _text(fields, name) for name in DRAFTED}
    row["incident_id"] = incident_id
    if not row["resolution_kind"]:
        del row["resolution_kind"]
    return row


def _valid(row: dict[str, str], edited: Sequence[str]) -> None:
    """Refuse an edit that gives a field a value accepting would refuse (a resolution kind that is none
    of the kinds, a date before 1970): said when it is typed, whatever other fields are still empty
    (those are the missing list's to name)."""
    typed = {name for name in edited if row.get(name)}
    try:
        HistoryRow.model_validate(row)
    except ValidationError as exc:
        wrong = {name: problem for name, problem in errors_by_field(exc).items() if name in typed}
        if wrong:
            raise FieldRefused.fields(wrong) from exc


def _storable(name: str, text: str) -> None:
    """NUL and unpaired surrogates mean nothing in a post-mortem, and PostgreSQL refuses both."""
    if "\x00" in text:
        raise FieldRefused.fields({name: "contains a NUL character"})
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FieldRefused.fields({name: "contains an unpaired surrogate"}) from exc


def _pending(draft: Draft) -> None:
    if draft.state != "pending":
        raise DraftRefused([f"draft {draft.id} was already {draft.state}"])


def _not_drafted(name: str) -> str:
    """A field no draft has, with the one a typo meant, else every one it could have been."""
    meant = difflib.get_close_matches(name, DRAFTED, n=1)
    return f"{name}: not a drafted field; " + (
        f"did you mean {meant[0]}?" if meant else f"the fields are {', '.join(DRAFTED)}"
    )


def edit(*, db_session: Session, draft: Draft, values: Mapping[str, str]) -> list[str]:
    """Set the given fields as a person wrote them; a changed field keeps no span (it is theirs now).
    Returns the names of the fields that changed; the missing list follows what is still empty."""
    _pending(draft)
    unknown = sorted(set(values) - set(DRAFTED))
    if unknown:
        raise FieldRefused([_not_drafted(name) for name in unknown])
    fields = dict(draft.fields)
    changed = []
    for name, text in values.items():
        _storable(name, text)
        new = text.strip()
        if new != value(draft, name):
            fields[name] = {"value": new, "spans": [], "origin": "edited"}
            changed.append(name)
    _valid(_row(fields, draft.incident_id), changed)
    draft.fields = fields
    draft.missing = missing_of(fields)
    db_session.flush()
    return changed


def accept(*, db_session: Session, draft: Draft, actor: str, as_new: bool = False) -> Incident:
    """The draft into the incident store as resolved history, with its memory write owed (flush only).

    A revision replaces the post-mortem of the incident it revises, as an edit of that record does;
    ``as_new`` files it as an incident of its own instead (another outage that reused a file name)."""
    _pending(draft)
    try:
        row = HistoryRow.model_validate(row_of(draft))
    except ValidationError as exc:
        raise DraftRefused.fields(errors_by_field(exc)) from exc
    history = historical(row)
    if draft.revises is not None and not as_new:
        incident = _revise(db_session, draft.revises, history, actor)
        message = f"Revised from {draft.source_name}, accepted by {actor}"
        draft.incident_id = incident.public_id
    else:
        incident = _file(db_session, history, actor)
        message = f"Imported from {draft.source_name}, accepted by {actor}"
        if draft.revises is not None:
            message += f", as a new incident rather than a revision of {draft.revises}"
            draft.revises = draft.revision_reason = None
    draft.state, draft.decided_by, draft.decided_at = "accepted", actor[:255], utcnow()
    _owe_record(db_session, incident)
    add_event(
        db_session=db_session,
        incident=incident,
        kind="draft_accepted",
        actor=actor,
        message=message,
        data={"draft": draft.id, "source": draft.source_name},
    )
    db_session.flush()
    return incident


def _file(db_session: Session, history: HistoricalIncident, actor: str) -> Incident:
    try:
        upsert_historical(db_session=db_session, history=history, origin="import", actor=actor, replace=False)
    except HistoryConflict as exc:
        raise DraftRefused([str(exc)]) from exc
    incident = get_by_public_id(db_session=db_session, public_id=history.public_id)
    if incident is None:
        raise DraftRefused([f"{history.public_id} was not stored"])
    return incident


def _revise(db_session: Session, public_id: str, history: HistoricalIncident, actor: str) -> Incident:
    """The revised post-mortem into the incident's record through the edit of a resolved incident: a
    new version, the replaced values on its timeline. Accepting a reviewed revision of what review
    accepted is the right to rewrite it. The service stays the incident's: another service is another
    outage, or a typo to fix before accepting."""
    incident = get_by_public_id(db_session=db_session, public_id=public_id)
    if incident is None:
        raise DraftRefused([f"{public_id} is no longer stored; accept the draft as a new incident"])
    if history.service != incident.service:
        raise DraftRefused(
            [
                f"service: the revision names {history.service}, {public_id} is filed under "
                f"{incident.service}; set the service to {incident.service}, or accept it as a new incident"
            ]
        )
    try:
        update_resolution(
            db_session=db_session,
            incident=incident,
            changes=ResolutionUpdate(**history.template),
            actor=actor,
            rewrite_history=True,
        )
    except ResolutionConflict as exc:
        raise DraftRefused([str(exc)]) from exc
    return incident


def _owe_record(db_session: Session, incident: Incident) -> None:
    """Owe memory the accepted record; it carries the draft's file and who imported and accepted it."""
    resolution = get_resolution(db_session=db_session, incident_id=incident.id)
    if resolution is None:
        raise DraftRefused([f"{incident.public_id} has no resolution"])
    owe_record(db_session, incident, resolution)


def reject(*, db_session: Session, draft: Draft, actor: str, reason: str) -> None:
    """Keep the draft out of memory, with why; the same document imported again stays rejected."""
    _pending(draft)
    _storable("reason", reason)
    text = reason.strip()
    if not text:
        raise DraftRefused(["reason: say why the draft is rejected"])
    draft.state, draft.decided_by, draft.decided_at = "rejected", actor[:255], utcnow()
    draft.reason = text[:MAX_REASON]
    db_session.flush()


def team_services(*, db_session: Session) -> list[str]:
    """The services the team's incidents were filed under: a note that names one in passing is about it."""
    return list(db_session.scalars(select(Incident.service).distinct().order_by(Incident.service)))


def comparable_texts(*, db_session: Session) -> list[tuple[str, str]]:
    """(label, text) of every stored post-mortem and pending draft, for flagging near-duplicates."""
    rows = db_session.execute(
        select(
            Incident.public_id, Resolution.symptom, Resolution.root_cause, Resolution.resolution_steps
        ).join(Resolution, Resolution.incident_id == Incident.id)
    ).all()
    found = [(public_id, " ".join((s, r, m))) for public_id, s, r, m in rows]
    for draft in db_session.scalars(select(Draft).where(Draft.state == "pending")):
        found.append((f"draft {draft.id}", comparison_text(draft.fields)))
    return found


def comparison_text(fields: Mapping[str, Any]) -> str:
    """What two post-mortems of the same incident share: symptom, root cause and resolution."""
    return " ".join(
        str((fields.get(name) or {}).get("value") or "")
        for name in ("symptom", "root_cause", "resolution_steps")
    )
