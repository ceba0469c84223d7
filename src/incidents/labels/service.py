"""Storing and reading relevance labels. Functions flush; the caller commits.

An engineer's mark always wins: it replaces any label on the same precedent (a correction included), and
an inferred label never replaces an engineer's.
"""

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from incidents.incident.models import Incident
from incidents.labels.models import RelevanceLabel
from incidents.timeutil import utcnow

ENGINEER = "engineer"
INFERRED = "inferred"


def store_label(
    *,
    db_session: Session,
    bank_id: str,
    incident_id: int,
    precedent: str,
    mark: str,
    how: str,
    who: str,
    probability: float | None = None,
    features: Sequence[float] = (),
) -> RelevanceLabel | None:
    """The label as stored, or None when an inferred label met an engineer's (which stays).

    Every replica's grading lane labels the precedents of resolved incidents, so another writer may
    insert the same precedent's label between this one's read and its insert: the insert runs in a
    savepoint, and on the unique key the label is applied to that writer's row by the same rules."""
    now = utcnow()
    row = _label(db_session, bank_id, incident_id, precedent)
    if row is None:
        row = RelevanceLabel(
            bank_id=bank_id,
            incident_id=incident_id,
            precedent=precedent,
            probability=probability,
            features=list(features),
            created_at=now,
            mark=mark,
            how=how,
            who=who,
            updated_at=now,
        )
        try:
            with db_session.begin_nested():
                db_session.add(row)
                db_session.flush()
            return row
        except IntegrityError:
            row = _label(db_session, bank_id, incident_id, precedent)
            assert row is not None  # the other writer's, committed: the unique key said so
    if how == INFERRED and row.how == ENGINEER:
        return None
    row.mark, row.how, row.who, row.updated_at = mark, how, who, now
    if features:
        row.features, row.probability = list(features), probability
    db_session.flush()
    return row


def _label(db_session: Session, bank_id: str, incident_id: int, precedent: str) -> RelevanceLabel | None:
    return db_session.scalar(
        select(RelevanceLabel).where(
            RelevanceLabel.bank_id == bank_id,
            RelevanceLabel.incident_id == incident_id,
            RelevanceLabel.precedent == precedent,
        )
    )


def incident_labels(*, db_session: Session, bank_id: str, incident_id: int) -> list[RelevanceLabel]:
    return list(
        db_session.scalars(
            select(RelevanceLabel)
            .where(RelevanceLabel.bank_id == bank_id, RelevanceLabel.incident_id == incident_id)
            .order_by(RelevanceLabel.precedent)
        )
    )


def bank_labels(*, db_session: Session, bank_id: str) -> list[RelevanceLabel]:
    """Every label of the bank, oldest first."""
    return list(
        db_session.scalars(
            select(RelevanceLabel).where(RelevanceLabel.bank_id == bank_id).order_by(RelevanceLabel.id)
        )
    )


def changed_since(*, db_session: Session, bank_id: str, since: datetime | None) -> int:
    """How many labels were given or changed after ``since`` (all of them when None)."""
    query = select(func.count()).select_from(RelevanceLabel).where(RelevanceLabel.bank_id == bank_id)
    if since is not None:
        query = query.where(RelevanceLabel.updated_at > since)
    return int(db_session.scalar(query) or 0)


def ruled_out(
    *, db_session: Session, bank_id: str, service: str, alertname: str, excluding: str | None = None
) -> list[tuple[RelevanceLabel, str]]:
    """The precedents engineers last marked "not related" on an incident of this alert (its service and
    rule), other than ``excluding``, each with that incident's id, oldest first. A later engineer's mark
    of the same precedent on another incident of the alert ("same failure" after all) takes it back."""
    rows = db_session.execute(
        select(RelevanceLabel, Incident.public_id)
        .join(Incident, Incident.id == RelevanceLabel.incident_id)
        .where(
            RelevanceLabel.bank_id == bank_id,
            RelevanceLabel.how == ENGINEER,
            Incident.service == service,
            Incident.alertname == alertname,
            Incident.public_id != (excluding or ""),
        )
        .order_by(RelevanceLabel.updated_at, RelevanceLabel.id)
    ).all()
    latest: dict[str, tuple[RelevanceLabel, str]] = {}
    for label, public_id in rows:
        latest[label.precedent] = (label, public_id)
    return [(label, public_id) for label, public_id in latest.values() if label.mark == "not_related"]
