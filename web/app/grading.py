"""Grading the briefings of resolved incidents, as a worker task, and the grade figures for /metrics.

Every way of resolving (the API, the form, a drafted post-mortem, the resolution conversation) ends
with a resolved incident, so the worker looks for resolved incidents whose briefing versions have no
grade yet and grades them against the stored resolution. Nothing is lost if the process stops: the
next pass finds the same ungraded rows. With an LLM configured its verdict is stored beside the
deterministic grade, which stays the grade of record.
"""

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agent.core.similarity import Similarity
from agent.resolution.grading import PostMortem, grade
from incidents.briefings.models import Briefing
from incidents.database import transaction
from incidents.grades import service as grades
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.resolution import service as resolutions
from incidents.timeutil import utcnow
from web.app import relevance
from web.app.container import Container
from web.app.lanes import Task
from web.app.metrics import BRIEFING_GRADES

log = logging.getLogger(__name__)

WINDOW = timedelta(days=90)
ACTOR = "recallops"


def _owed(container: Container, incident_id: int) -> tuple[PostMortem, list[Briefing]] | None:
    with container.sessions() as db:
        incident = db.get(Incident, incident_id)
        resolution = resolutions.get_resolution(db_session=db, incident_id=incident_id)
        if incident is None or resolution is None:
            return None
        recurrence = None
        if incident.recurrence_of_id is not None:
            links = incidents.public_ids(db_session=db, ids=[incident.recurrence_of_id])
            recurrence = links.get(incident.recurrence_of_id)
        r = resolution
        post_mortem = PostMortem.of(
            fields=(r.root_cause, r.resolution_steps, r.symptom, r.outcome),
            root_cause=r.root_cause,
            recurrence_of=recurrence,
            marked=relevance.marked_same(db, container.settings.memory.bank_id, incident_id),
        )
        owed = grades.ungraded_briefings(db_session=db, incident_id=incident_id)
        db.expunge_all()
        return post_mortem, owed


def grade_incident(container: Container, incident_id: int) -> int:
    """Grade every ungraded briefing version of a resolved incident; how many were graded.

    Grading (which may embed) runs before the write transaction opens, so it holds no lock."""
    found = _owed(container, incident_id)
    if found is None:
        return 0
    post_mortem, owed = found
    similarity = Similarity(container.embedder, container.bank.item_vectors)
    results = [(briefing, grade(briefing.data, post_mortem, similarity)) for briefing in owed]
    stored = 0
    with transaction(container.sessions) as db, serialized_writes(db):
        incident = db.get(Incident, incident_id)
        assert incident is not None
        for briefing, result in results:
            row = grades.store_grade(
                db_session=db,
                briefing=briefing,
                score=result.score,
                reason=result.reason,
                matched=result.matched,
            )
            if row is None:
                continue
            stored += 1
            incidents.add_event(
                db_session=db,
                incident=incident,
                kind="graded",
                actor=ACTOR,
                message=f"briefing v{briefing.version} graded {result.score}: {result.reason}",
                data={"version": briefing.version, "score": result.score},
            )
        db.commit()
    relevance.infer_labels(container, incident_id)
    return stored


def grading_task(container: Container) -> Task:
    """The worker task: grade the briefings of incidents resolved since the last pass."""

    async def grade_resolved_incidents() -> bool:
        with container.sessions() as db:
            owed = grades.ungraded_incidents(db_session=db)
        done = 0
        for incident_id in owed:
            done += await asyncio.to_thread(grade_incident, container, incident_id)
        return done > 0

    return grade_resolved_incidents


def track_grades(sessions: sessionmaker[Session]) -> None:
    """Grades of the last 90 days, read at scrape time: count, mean score, share at 100."""

    def figure(name: str) -> Callable[[], float]:
        def value() -> float:
            try:
                with sessions() as db:
                    summary = grades.summary(db_session=db, since=utcnow() - WINDOW)
            except SQLAlchemyError:
                log.warning("grade summary failed", exc_info=True)
                return float("nan")
            found = {"count": summary.count, "mean_score": summary.mean, "share_at_100": summary.share_at_100}
            number = found[name]
            return float(number) if number is not None else float("nan")

        return value

    for name in ("count", "mean_score", "share_at_100"):
        BRIEFING_GRADES.labels(figure=name).set_function(figure(name))
