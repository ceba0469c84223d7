"""Briefings stored per incident, versioned, and the job rows the worker briefs from.

A briefing is never overwritten: each run adds the next version, so an engineer can see what changed
after a re-run. Jobs are claimed with a short lease (``locked_until``) that the worker renews while it
works: a worker that dies mid-job stops renewing, the lease expires within one lease length, and the
job is claimed again. Each claim counts an attempt, and the attempt number is the claim's fencing
token: renewing, finishing and failing all match it, so a worker that lost its lease (it stalled past
the expiry and another took the job over) can neither extend nor finish the job it no longer holds.
A job that keeps failing stops after ``max_attempts``. Claiming is a compare-and-set update, safe for
several workers on SQLite and PostgreSQL alike (where candidate rows are also read with ``SKIP LOCKED``).
Functions flush; the caller commits.
"""

import random
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from incidents.briefings.models import Briefing, Job
from incidents.database import rowcount
from incidents.delivery import outbox as deliveries
from incidents.delivery.routing import BRIEFING_STORED, BRIEFING_UPDATED
from incidents.incident.models import Incident
from incidents.timeutil import utcnow

BRIEFING_JOB = "briefing"
DEFAULT_LEASE_S = 10.0
DEFAULT_MAX_ATTEMPTS = 5
MAX_BACKOFF_S = 600.0


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


def claim_due_jobs(
    *,
    db_session: Session,
    kind: str = BRIEFING_JOB,
    limit: int = 1,
    lease_s: float = DEFAULT_LEASE_S,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    now: datetime | None = None,
) -> list[Job]:
    """Take up to ``limit`` due jobs (pending and due, or running with an expired lease)."""
    now = now or utcnow()
    due = or_(
        and_(Job.state == "pending", Job.run_after <= now),
        and_(Job.state == "running", Job.locked_until < now),
    )
    query = select(Job.id).where(Job.kind == kind, due).order_by(Job.run_after, Job.id).limit(limit * 4)
    if db_session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    claimed: list[Job] = []
    for job_id in db_session.scalars(query).all():
        if len(claimed) >= limit:
            break
        result = db_session.execute(
            update(Job)
            .where(Job.id == job_id, due)
            .values(state="running", locked_until=now + timedelta(seconds=lease_s), attempts=Job.attempts + 1)
            .execution_options(synchronize_session=False)
        )
        if rowcount(result) != 1:
            continue
        job = db_session.get(Job, job_id, populate_existing=True)
        assert job is not None
        if job.attempts > max_attempts:
            job.state, job.finished_at, job.locked_until = "failed", now, None
            job.last_error = job.last_error or "lease expired too many times (the worker stopped mid-job)"
            continue
        claimed.append(job)
    db_session.flush()
    return claimed


def renew_job_lease(
    *, db_session: Session, job_id: int, attempts: int, lease_s: float, now: datetime | None = None
) -> bool:
    """Extend the lease of the claim numbered ``attempts``; False once that claim is no longer held."""
    now = now or utcnow()
    result = db_session.execute(
        update(Job)
        .where(Job.id == job_id, Job.state == "running", Job.attempts == attempts)
        .values(locked_until=now + timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)
    )
    return bool(rowcount(result))


def holds_lease(job: Job, *, attempts: int) -> bool:
    """True while the claim numbered ``attempts`` is still the job's current one."""
    return job.state == "running" and job.attempts == attempts


def complete_job(*, db_session: Session, job: Job, now: datetime | None = None) -> None:
    job.state, job.finished_at, job.locked_until, job.last_error = "done", now or utcnow(), None, None
    db_session.flush()


def fail_job(
    *,
    db_session: Session,
    job: Job,
    error: str,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    base_delay_s: float = 2.0,
    now: datetime | None = None,
) -> None:
    """Back off exponentially (with jitter) and try again, or give up after ``max_attempts``."""
    now = now or utcnow()
    job.last_error = error[:2000]
    job.locked_until = None
    if job.attempts >= max_attempts:
        job.state, job.finished_at = "failed", now
    else:
        delay = min(MAX_BACKOFF_S, base_delay_s * 2 ** max(job.attempts - 1, 0))
        job.state, job.run_after = "pending", now + timedelta(seconds=delay * random.uniform(0.8, 1.2))
    db_session.flush()


def latest_job(*, db_session: Session, incident_id: int, kind: str = BRIEFING_JOB) -> Job | None:
    return db_session.scalar(
        select(Job).where(Job.kind == kind, Job.incident_id == incident_id).order_by(Job.id.desc()).limit(1)
    )


def job_counts(*, db_session: Session, kind: str = BRIEFING_JOB) -> dict[str, int]:
    rows = db_session.execute(
        select(Job.state, func.count(Job.id)).where(Job.kind == kind).group_by(Job.state)
    )
    return {state: count for state, count in rows}
