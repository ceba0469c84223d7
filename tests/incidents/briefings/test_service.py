"""Briefings are versioned, and briefing jobs are claimed with a lease, retried and never lost."""

from datetime import timedelta

from sqlalchemy.orm import Session

from incidents.briefings import service
from incidents.briefings.models import Job
from incidents.incident.models import Incident
from incidents.timeutil import utcnow


def make_incident(db: Session, public_id: str = "INC-0001") -> Incident:
    now = utcnow()
    incident = Incident(
        public_id=public_id,
        title="pool exhausted",
        service="checkout-service",
        alertname="PoolExhausted",
        severity="critical",
        status="triggered",
        first_seen=now,
        last_seen=now,
    )
    db.add(incident)
    db.flush()
    return incident


def test_each_store_adds_the_next_version_and_latest_reads_it(db: Session) -> None:
    incident = make_incident(db)
    first = service.store_briefing(
        db_session=db, incident_id=incident.id, data={"v": 1}, mode="llm", memory="on"
    )
    second = service.store_briefing(
        db_session=db, incident_id=incident.id, data={"v": 2}, mode="evidence-only", memory="off"
    )
    assert (first.version, second.version) == (1, 2)
    latest = service.latest_briefing(db_session=db, incident_id=incident.id)
    assert latest is not None and latest.data == {"v": 2} and latest.memory == "off"
    assert [b.version for b in service.briefing_versions(db_session=db, incident_id=incident.id)] == [2, 1]
    assert service.get_briefing(db_session=db, incident_id=incident.id, version=1).data == {"v": 1}


def test_enqueue_does_not_duplicate_a_waiting_job(db: Session) -> None:
    incident = make_incident(db)
    a = service.enqueue_briefing(db_session=db, incident_id=incident.id)
    b = service.enqueue_briefing(db_session=db, incident_id=incident.id)
    c = service.enqueue_briefing(db_session=db, incident_id=incident.id, args={"memory": "off"})
    assert a.id == b.id != c.id


def test_a_claimed_job_is_not_claimed_again_until_its_lease_expires(db: Session) -> None:
    incident = make_incident(db)
    job = service.enqueue_briefing(db_session=db, incident_id=incident.id)
    now = utcnow()
    claimed = service.claim_due_jobs(db_session=db, now=now, lease_s=60)
    assert [j.id for j in claimed] == [job.id]
    assert claimed[0].state == "running" and claimed[0].attempts == 1
    assert service.claim_due_jobs(db_session=db, now=now + timedelta(seconds=30)) == []
    again = service.claim_due_jobs(db_session=db, now=now + timedelta(seconds=61))
    assert [j.id for j in again] == [job.id] and again[0].attempts == 2


def test_failure_backs_off_then_gives_up(db: Session) -> None:
    incident = make_incident(db)
    job = service.enqueue_briefing(db_session=db, incident_id=incident.id)
    now = utcnow()
    for attempt in range(1, 4):
        [claimed] = service.claim_due_jobs(db_session=db, now=now, max_attempts=3)
        service.fail_job(db_session=db, job=claimed, error=f"boom {attempt}", max_attempts=3, now=now)
        if attempt < 3:
            assert claimed.state == "pending" and claimed.run_after > now
            assert service.claim_due_jobs(db_session=db, now=now) == []
            now = claimed.run_after
    db.refresh(job)
    assert job.state == "failed" and job.last_error == "boom 3" and job.finished_at is not None
    assert service.job_counts(db_session=db) == {"failed": 1}


def test_a_job_whose_worker_keeps_dying_ends_failed(db: Session) -> None:
    incident = make_incident(db)
    job = service.enqueue_briefing(db_session=db, incident_id=incident.id)
    now = utcnow()
    for _ in range(2):
        assert service.claim_due_jobs(db_session=db, now=now, lease_s=1, max_attempts=2)
        now += timedelta(seconds=2)
    assert service.claim_due_jobs(db_session=db, now=now, lease_s=1, max_attempts=2) == []
    db.refresh(job)
    assert job.state == "failed" and "lease expired" in (job.last_error or "")


def test_complete_clears_the_lease(db: Session) -> None:
    incident = make_incident(db)
    service.enqueue_briefing(db_session=db, incident_id=incident.id)
    [job] = service.claim_due_jobs(db_session=db)
    service.complete_job(db_session=db, job=job)
    latest = service.latest_job(db_session=db, incident_id=incident.id)
    assert isinstance(latest, Job) and latest.state == "done" and latest.locked_until is None


def test_only_the_current_claim_renews_its_lease(db: Session) -> None:
    incident = make_incident(db)
    service.enqueue_briefing(db_session=db, incident_id=incident.id)
    now = utcnow()
    [first] = service.claim_due_jobs(db_session=db, now=now, lease_s=10)
    assert service.renew_job_lease(db_session=db, job_id=first.id, attempts=1, lease_s=10, now=now)
    db.refresh(first)
    assert first.locked_until == now + timedelta(seconds=10)

    later = now + timedelta(seconds=11)  # the first worker stopped renewing; another takes the job
    [second] = service.claim_due_jobs(db_session=db, now=later, lease_s=10)
    assert second.id == first.id and second.attempts == 2
    assert not service.renew_job_lease(db_session=db, job_id=first.id, attempts=1, lease_s=10, now=later)
    assert not service.holds_lease(second, attempts=1)
    assert service.holds_lease(second, attempts=2)
    db.refresh(second)
    assert second.locked_until == later + timedelta(seconds=10)
