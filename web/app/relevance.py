"""Relevance labels in the service: inferred when an incident is resolved, marked or corrected by engineers.

Every way of resolving ends in the grading flow (``web.app.grading``), which calls ``infer_labels``: each
precedent the incident's briefings showed gets the label the post-mortem implies, marked inferred, unless
an engineer already marked it or the post-mortem does not say. ``mark`` stores an engineer's marks (the
resolve form, the API, the incident page), which replace any label on the same precedent. The precedents
an engineer marked the same failure are named by the resolution as its text names them
(``agent.resolution.grading``), so when marks change which those are, a resolved incident's grades are
owed again and the grading worker grades its briefings anew.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from agent.core.similarity import Similarity
from agent.resolution.labels import MARKS, Mark, Shown, infer, merged, relevant
from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.grades import service as grades
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.labels import service as labels
from incidents.labels.models import RelevanceLabel
from incidents.locking import serialized_writes
from incidents.resolution import service as resolutions
from web.app.container import Container

ACTOR = "recallops"


class UnknownPrecedent(ValueError):
    """A mark names a precedent no briefing of the incident showed, or a mark that does not exist."""


def shown(container: Container, incident_id: int) -> list[Shown]:
    """The precedents any briefing version of the incident showed, once each."""
    with container.sessions() as db:
        versions = briefings.briefing_versions(db_session=db, incident_id=incident_id)
        return merged([v.data for v in versions])


def infer_labels(container: Container, incident_id: int) -> int:
    """Inferred labels for the precedents the resolved incident's briefings showed; how many were stored."""
    with container.sessions() as db:
        resolution = resolutions.get_resolution(db_session=db, incident_id=incident_id)
        if resolution is None:
            return 0
        root_cause = resolution.root_cause
    precedents = shown(container, incident_id)
    if not precedents:
        return 0
    similarity = Similarity(container.embedder)
    marks = [(p, mark) for p in precedents if (mark := infer(root_cause, p, similarity)) is not None]
    bank_id = container.settings.memory.bank_id
    with transaction(container.sessions) as db, serialized_writes(db):
        stored = _store(db, bank_id, incident_id, marks, how=labels.INFERRED, who=ACTOR)
        db.commit()
    return stored


def mark(container: Container, incident: Incident, marks: Mapping[str, str], *, who: str) -> int:
    """An engineer's marks, ``{precedent id: mark}``; every id must be a precedent the briefings showed."""
    known = {p.id: p for p in shown(container, incident.id)}
    chosen: list[tuple[Shown, Mark]] = []
    for precedent, value in marks.items():
        if precedent not in known:
            raise UnknownPrecedent(f"{precedent!r} is not a precedent this incident's briefings showed")
        if value not in MARKS:
            raise UnknownPrecedent(f"{value!r} is not a mark: use one of {', '.join(MARKS)}")
        chosen.append((known[precedent], value))
    bank_id = container.settings.memory.bank_id
    with transaction(container.sessions) as db, serialized_writes(db):
        before = marked_same(db, bank_id, incident.id)
        stored = _store(db, bank_id, incident.id, chosen, how=labels.ENGINEER, who=who)
        after = marked_same(db, bank_id, incident.id)
        if after != before:
            _owe_grades_again(db, incident.id, after, who=who)
        db.commit()
    return stored


def marked_same(db: Session, bank_id: str, incident_id: int) -> frozenset[str]:
    """The precedents an engineer marked the same failure on this incident."""
    rows = labels.incident_labels(db_session=db, bank_id=bank_id, incident_id=incident_id)
    return frozenset(r.precedent for r in rows if r.how == labels.ENGINEER and relevant(r.mark))


def _owe_grades_again(db: Session, incident_id: int, same_failure: frozenset[str], *, who: str) -> None:
    """A resolved incident's grades are dropped, to be graded again, once the marks changed which
    precedents were the same failure."""
    incident = db.get(Incident, incident_id)
    if incident is None or incident.status != "resolved":
        return
    dropped = grades.forget_grades(db_session=db, incident_id=incident_id)
    if dropped:
        incidents.add_event(
            db_session=db,
            incident=incident,
            kind="grades_owed",
            actor=who,
            message=f"{dropped} grade(s) owed again: the same failure was marked anew",
            data={"same_failure": sorted(same_failure)},
        )


def _store(
    db: Session, bank_id: str, incident_id: int, marks: list[tuple[Shown, Mark]], *, how: str, who: str
) -> int:
    """The labels stored in the caller's transaction; how many (an inferred one never replaces an
    engineer's)."""
    stored = 0
    for precedent, value in marks:
        row = labels.store_label(
            db_session=db,
            bank_id=bank_id,
            incident_id=incident_id,
            precedent=precedent.id,
            mark=value,
            how=how,
            who=who,
            probability=precedent.probability,
            features=precedent.features,
        )
        stored += row is not None
    return stored


@dataclass(frozen=True)
class LabelLine:
    """One precedent on the incident page: its label (if any), who gave it, how and when."""

    precedent: str
    probability: float | None
    mark: str | None
    how: str | None
    who: str | None
    updated_at: datetime | None


def label_lines(container: Container, incident_id: int, rows: list[RelevanceLabel]) -> list[LabelLine]:
    """Every precedent shown with its label, in the briefings' order, then labels of precedents no longer
    shown."""
    by_id = {r.precedent: r for r in rows}
    lines = []
    for p in shown(container, incident_id):
        r = by_id.pop(p.id, None)
        if r is None:
            lines.append(LabelLine(p.id, p.probability, None, None, None, None))
        else:
            lines.append(LabelLine(p.id, p.probability, r.mark, r.how, r.who, r.updated_at))
    lines += [
        LabelLine(r.precedent, r.probability, r.mark, r.how, r.who, r.updated_at) for r in by_id.values()
    ]
    return lines
