"""Briefings in the service: the worker task and stored re-runs (the agent they run is ``web.app.agent``).

A chat model is opened per briefing (its HTTP client belongs to the event loop that runs it: the
worker's thread or the web server's), while the bank and the database come from the container.
The briefing lane claims jobs with a short lease and renews it while the agent runs
(``web.app.lanes``), so a briefing owed by a process that stops is made by another replica within
one lease, or by this one after it restarts; the claim's attempt number fences the store, so a job
taken over is briefed once.
"""

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agent.core.evidence import AlertInput
from agent.core.schema import Briefing
from incidents.briefings import service as briefings
from incidents.briefings.models import Briefing as StoredBriefing
from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.queue.table import Lease
from web.app.agent import alert_for_incident, open_agent
from web.app.container import Container
from web.app.lanes import QueueLane, Task
from web.app.metrics import BRIEFING_JOBS, BRIEFING_LATENCY, BRIEFINGS

log = logging.getLogger(__name__)

ACTOR = "recallops"


@dataclass(frozen=True)
class StoredResult:
    incident: str
    version: int
    briefing: Briefing


def track_briefing_jobs(sessions: sessionmaker[Session]) -> None:
    """Briefing jobs waiting, in progress and given up, counted at scrape time across every process."""

    def count(state: str) -> Callable[[], float]:
        def value() -> float:
            try:
                with sessions() as db:
                    return float(briefings.job_counts(db_session=db).get(state, 0))
            except SQLAlchemyError:
                log.warning("briefing job count failed", exc_info=True)
                return float("nan")

        return value

    for state in ("pending", "running", "failed"):
        BRIEFING_JOBS.labels(state=state).set_function(count(state))


@dataclass(frozen=True)
class JobClaim:
    """A claimed job: its id and the attempt number that fences this claim."""

    job_id: int
    attempts: int
    incident_id: int | None
    memory_on: bool


def store(container: Container, *, incident_id: int, briefing: Briefing) -> StoredBriefing:
    """Store a new version in one transaction, with a line on the timeline."""
    with transaction(container.sessions) as db, serialized_writes(db):
        row = _add_version(db, incident_id, briefing)
        db.commit()
    BRIEFINGS.labels(mode=briefing.mode).inc()
    return row


def store_for_job(container: Container, claim: JobClaim, briefing: Briefing) -> StoredBriefing | None:
    """Store the job's briefing and finish the job in one transaction, if the claim still holds it.

    None when it does not: this worker lost its lease and the briefing is left to the one that took
    the job over, so a job is briefed once however its workers fared.
    """
    assert claim.incident_id is not None
    with transaction(container.sessions) as db, serialized_writes(db):
        job = db.get(Job, claim.job_id, with_for_update=True)
        if job is None or not briefings.holds_lease(job, attempts=claim.attempts):
            log.warning("briefing dropped: the job was taken over", extra={"job_id": claim.job_id})
            return None
        row = _add_version(db, claim.incident_id, briefing)
        briefings.complete_job(db_session=db, job=job)
        db.commit()
    BRIEFINGS.labels(mode=briefing.mode).inc()
    return row


def _add_version(db: Session, incident_id: int, briefing: Briefing) -> StoredBriefing:
    # Loaded first and held: the session keeps loaded rows only while something refers to them, so the
    # delivery owed inside ``store_briefing`` finds this one instead of reading it again.
    incident = db.get(Incident, incident_id)
    assert incident is not None
    row = briefings.store_briefing(
        db_session=db,
        incident_id=incident_id,
        data=briefing.model_dump(mode="json"),
        mode=briefing.mode,
        memory=briefing.memory,
    )
    warn = f"; {len(briefing.warnings)} warning(s)" if briefing.warnings else ""
    incidents.add_event(
        db_session=db,
        incident=incident,
        kind="briefed",
        actor=ACTOR,
        message=f"briefing v{row.version} ({briefing.mode}, memory {briefing.memory}, "
        f"{len(briefing.related_incidents)} related incident(s)){warn}",
        data={"version": row.version, "mode": briefing.mode, "seen_before": briefing.seen_before},
    )
    return row


def load_alert(container: Container, incident_id: int) -> AlertInput | None:
    with container.sessions() as db:
        incident = db.get(Incident, incident_id)
        return alert_for_incident(db_session=db, incident=incident) if incident else None


async def brief_incident(
    container: Container, *, incident_id: int, memory_on: bool = True
) -> Briefing | None:
    alert = load_alert(container, incident_id)
    if alert is None:
        return None
    started = time.perf_counter()
    async with open_agent(container) as agent:
        briefing = await agent.brief(alert, memory_on=memory_on)
    BRIEFING_LATENCY.labels(mode=briefing.mode).observe(time.perf_counter() - started)
    return briefing


async def run_job(container: Container, claim: JobClaim) -> str:
    """Brief the claimed job's incident and store it; how the job ended (done, dropped or failed)."""
    incident_id = claim.incident_id
    try:
        if incident_id is None:
            raise LookupError("the job names no incident")
        briefing = await brief_incident(container, incident_id=incident_id, memory_on=claim.memory_on)
        if briefing is None:
            raise LookupError(f"incident {incident_id} does not exist")
        return "done" if store_for_job(container, claim, briefing) is not None else "dropped"
    except Exception as exc:
        log.exception("briefing job failed", extra={"job_id": claim.job_id, "incident_id": incident_id})
        with transaction(container.sessions) as db, serialized_writes(db):
            job = db.get(Job, claim.job_id)
            if job is not None and briefings.holds_lease(job, attempts=claim.attempts):
                briefings.fail_job(db_session=db, job=job, error=f"{type(exc).__name__}: {exc}")
            db.commit()
        return "failed"


def job_lane(
    container: Container,
    *,
    kind: str,
    run: Callable[[JobClaim], Awaitable[str]],
    concurrency: int,
) -> QueueLane[JobClaim]:
    """A lane for one job kind of the ``jobs`` queue: claims carry the job's id, attempt and incident."""
    lease_s = container.settings.web.lease_s

    def claim(db: Session, limit: int) -> list[JobClaim]:
        jobs = briefings.claim_due_jobs(db_session=db, kind=kind, limit=limit, lease_s=lease_s)
        return [
            JobClaim(job.id, job.attempts, job.incident_id, job.args.get("memory", "on") != "off")
            for job in jobs
        ]

    return QueueLane(
        kind,
        queue=briefings.JOBS.scoped(Job.kind == kind),
        sessions=container.sessions,
        claim=claim,
        run=run,
        lease_of=lambda job: Lease(job.job_id, job.attempts),
        lease_s=lease_s,
        concurrency=concurrency,
        poll_s=container.settings.web.worker_poll_s,
    )


def briefing_lane(container: Container) -> QueueLane[JobClaim]:
    return job_lane(
        container,
        kind=briefings.BRIEFING_JOB,
        run=functools.partial(run_job, container),
        concurrency=container.settings.web.briefing_concurrency,
    )


def briefing_task(container: Container) -> Task:
    """Brief one due incident, if any; whether there was one (the eval runner drains with it)."""
    lane = briefing_lane(container)

    async def brief_due_incident() -> bool:
        return (await lane.drain_once(1)).attempted > 0

    return brief_due_incident
