"""Briefings stored per incident, versioned, and the job rows the worker briefs from.

A briefing is never overwritten: each run adds the next version, so an engineer can see what changed
after a re-run. Jobs are claimed with a short lease (``locked_until``) that the worker renews while it
works: a worker that dies mid-job stops renewing, the lease expires within one lease length, and the
job is claimed again. Claiming, renewing, fencing, attempts and backoff are the one leased queue's
(``incidents.queue``): the ``jobs`` table is one queue, each job ``kind`` a lane of the worker.
Functions flush; the caller commits.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from incidents.briefings.models import Briefing, Job
from incidents.delivery import outbox as deliveries
from incidents.delivery.routing import BRIEFING_STORED, BRIEFING_UPDATED
from incidents.incident.models import Incident
from incidents.queue.table import Lease, Queue
from incidents.timeutil import utcnow

BRIEFING_JOB = "briefing"
DEFAULT_LEASE_S = 10.0
DEFAULT_MAX_ATTEMPTS = 5


def store_briefing(
    *, db_session: Session, incident_id: int, data: dict[str, Any], mode: str, memory: str
) -> Briefing:
    """Add the next version; a concurrent writer taking the same number makes this retry once."""
    for attempt in range(2):
        version = (
            db_session.scalar(select(func.max(Briefing.version)).where(Briefing.incident_id == incident_id))
            or 0
        ) + 1
        briefing = Briefing(incident_id=incident_id, version=version, mode=mode, memory=memory, data=data)
        try:
            with db_session.begin_nested():
                db_session.add(briefing)
                db_session.flush()
            _owe_delivery(db_session, briefing)
            return briefing
        except IntegrityError:
            if attempt == 1:
                raise
    raise AssertionError("unreachable")


def _owe_delivery(db_session: Session, briefing: Briefing) -> None:
    """The first version is news to the channels; later ones are updates, threaded under it."""
    incident = db_session.get(Incident, briefing.incident_id)
    if incident is not None:
        deliveries.owe(
            db_session=db_session,
            incident=incident,
            event=BRIEFING_STORED if briefing.version == 1 else BRIEFING_UPDATED,
            data={"version": briefing.version},
        )


def latest_briefing(*, db_session: Session, incident_id: int) -> Briefing | None:
    return db_session.scalar(
        select(Briefing).where(Briefing.incident_id == incident_id).order_by(Briefing.version.desc()).limit(1)
    )


def get_briefing(*, db_session: Session, incident_id: int, version: int) -> Briefing | None:
    return db_session.scalar(
        select(Briefing).where(Briefing.incident_id == incident_id, Briefing.version == version)
    )


def briefing_versions(*, db_session: Session, incident_id: int) -> list[Briefing]:
    return list(
        db_session.scalars(
            select(Briefing).where(Briefing.incident_id == incident_id).order_by(Briefing.version.desc())
        )
    )


def enqueue_briefing(
    *, db_session: Session, incident_id: int, args: dict[str, Any] | None = None, now: datetime | None = None
) -> Job:
    """Queue a briefing, unless one for the same incident and arguments is already waiting."""
    args = args or {}
    for job in db_session.scalars(
        select(Job).where(Job.kind == BRIEFING_JOB, Job.incident_id == incident_id, Job.state == "pending")
    ):
        if job.args == args:
            return job
    job = Job(
        kind=BRIEFING_JOB, incident_id=incident_id, args=args, state="pending", run_after=now or utcnow()
    )
    db_session.add(job)
    db_session.flush()
    return job


JOBS = Queue(
    model=Job,
    due=Job.run_after,
    open_states=("pending",),
    leased_state="running",
    retry_state="pending",
    done_state="done",
    ended_at="finished_at",
)


def claim_due_jobs(
    *,
    db_session: Session,
    kind: str = BRIEFING_JOB,
    limit: int = 1,
    lease_s: float = DEFAULT_LEASE_S,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    now: datetime | None = None,
) -> list[Job]:
    """Take up to ``limit`` due jobs of ``kind`` (pending and due, or running with an expired lease)."""
    leases = JOBS.claim(
        db_session,
        limit=limit,
        lease_s=lease_s,
        max_attempts=max_attempts,
        where=(Job.kind == kind,),
        now=now,
    )
    jobs: list[Job] = JOBS.claimed(db_session, leases)
    return jobs


def renew_job_lease(
    *, db_session: Session, job_id: int, attempts: int, lease_s: float, now: datetime | None = None
) -> bool:
    """Extend the lease of the claim numbered ``attempts``; False once that claim is no longer held."""
    return bool(JOBS.renew(db_session, [Lease(job_id, attempts)], lease_s=lease_s, now=now))


def holds_lease(job: Job, *, attempts: int) -> bool:
    """True while the claim numbered ``attempts`` is still the job's current one."""
    return job.state == "running" and job.attempts == attempts


def complete_job(*, db_session: Session, job: Job, now: datetime | None = None) -> None:
    JOBS.complete(db_session, Lease(job.id, job.attempts), now=now)
    db_session.refresh(job)


def fail_job(
    *,
    db_session: Session,
    job: Job,
    error: str,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    now: datetime | None = None,
) -> None:
    """Back off and try again (``incidents.queue.backoff``), or give up after ``max_attempts``."""
    JOBS.fail(db_session, Lease(job.id, job.attempts), error=error, max_attempts=max_attempts, now=now)
    db_session.refresh(job)


def latest_job(*, db_session: Session, incident_id: int, kind: str = BRIEFING_JOB) -> Job | None:
    return db_session.scalar(
        select(Job).where(Job.kind == kind, Job.incident_id == incident_id).order_by(Job.id.desc()).limit(1)
    )


def first_briefing_coming(*, db_session: Session, incident_id: int) -> bool:
    """No briefing of the incident is stored yet and its briefing job is waiting or running."""
    job = latest_job(db_session=db_session, incident_id=incident_id)
    if job is None or job.state not in ("pending", "running"):
        return False
    stored = select(Briefing.id).where(Briefing.incident_id == incident_id).limit(1)
    return db_session.scalar(stored) is None


def job_counts(*, db_session: Session, kind: str = BRIEFING_JOB) -> dict[str, int]:
    rows = db_session.execute(
        select(Job.state, func.count(Job.id)).where(Job.kind == kind).group_by(Job.state)
    )
    return {state: count for state, count in rows}
