"""Stored briefing grades: which versions still owe one, storing one, and the figures over a window.

A briefing is owed a grade once its incident is resolved. Storing is idempotent per briefing (a unique
row), so two workers grading the same incident store it once. Functions flush; the caller commits.
"""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from incidents.briefings.models import Briefing
from incidents.grades.models import BriefingGrade
from incidents.incident.models import Incident


@dataclass(frozen=True)
class GradeSummary:
    count: int
    mean: float | None
    share_at_100: float | None


def ungraded_incidents(*, db_session: Session, limit: int = 10) -> list[int]:
    """Resolved incidents with at least one briefing version not graded yet."""
    graded = select(BriefingGrade.briefing_id)
    query = (
        select(Briefing.incident_id)
        .join(Incident, Incident.id == Briefing.incident_id)
        .where(Incident.status == "resolved", Briefing.id.not_in(graded))
        .distinct()
        .order_by(Briefing.incident_id)
        .limit(limit)
    )
    return list(db_session.scalars(query))


def ungraded_briefings(*, db_session: Session, incident_id: int) -> list[Briefing]:
    graded = select(BriefingGrade.briefing_id)
    return list(
        db_session.scalars(
            select(Briefing)
            .where(Briefing.incident_id == incident_id, Briefing.id.not_in(graded))
            .order_by(Briefing.version)
        )
    )


def store_grade(
    *,
    db_session: Session,
    briefing: Briefing,
    score: int,
    reason: str,
    matched: str | None,
) -> BriefingGrade | None:
    """The grade, or ``None`` when another writer graded this briefing first (``briefing`` may be
    detached: only its id, incident and version are read)."""
    row = BriefingGrade(
        briefing_id=briefing.id,
        incident_id=briefing.incident_id,
        version=briefing.version,
        score=score,
        reason=reason[:2000],
        matched=matched,
    )
    try:
        with db_session.begin_nested():
            db_session.add(row)
            db_session.flush()
    except IntegrityError:
        return None
    return row


def forget_grades(*, db_session: Session, incident_id: int) -> int:
    """Drop an incident's grades, so that its briefings are owed them again; how many were dropped."""
    rows = incident_grades(db_session=db_session, incident_id=incident_id)
    for row in rows:
        db_session.delete(row)
    db_session.flush()
    return len(rows)


def incident_grades(*, db_session: Session, incident_id: int) -> list[BriefingGrade]:
    return list(
        db_session.scalars(
            select(BriefingGrade)
            .where(BriefingGrade.incident_id == incident_id)
            .order_by(BriefingGrade.version)
        )
    )


def grades_since(*, db_session: Session, since: datetime | None) -> list[tuple[BriefingGrade, str]]:
    """Grades (newest first) with their incident's readable id."""
    query = select(BriefingGrade, Incident.public_id).join(Incident, Incident.id == BriefingGrade.incident_id)
    if since is not None:
        query = query.where(BriefingGrade.created_at >= since)
    rows = db_session.execute(query.order_by(BriefingGrade.created_at.desc(), BriefingGrade.id.desc()))
    return [(grade, public_id) for grade, public_id in rows]


def summary(*, db_session: Session, since: datetime | None) -> GradeSummary:
    """How many were graded since ``since``, their mean score and the share at 100."""
    query = select(
        func.count(BriefingGrade.id),
        func.avg(BriefingGrade.score),
        func.sum(case((BriefingGrade.score == 100, 1), else_=0)),
    )
    if since is not None:
        query = query.where(BriefingGrade.created_at >= since)
    count, mean, perfect = db_session.execute(query).one()
    if not count:
        return GradeSummary(count=0, mean=None, share_at_100=None)
    return GradeSummary(
        count=int(count), mean=round(float(mean), 1), share_at_100=round(int(perfect) / count, 3)
    )
