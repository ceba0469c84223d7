"""Short leases renewed while the work runs: a live claim is never taken over, a dead one is, once."""

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from incidents.briefings import service as briefings
from incidents.briefings.models import Briefing, Job
from incidents.database import transaction
from incidents.queue.heartbeat import Heartbeat
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident
from tests.support.net import wait_for
from tests.web.http.routes.conftest import configure
from web.app.briefings import JobClaim, brief_incident, store_for_job
from web.app.container import Container

LEASE_S = 1.0


@pytest.fixture
async def container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Container]:
    monkeypatch.setenv("RECALLOPS_LEASE_S", str(LEASE_S))
    built = Container.build(configure(monkeypatch, tmp_path / "data", f"sqlite:///{tmp_path / 'r.db'}"))
    yield built
    await built.aclose()


def queue_job(container: Container) -> int:
    with transaction(container.sessions) as db:
        incident = make_incident(db)
        briefings.enqueue_briefing(db_session=db, incident_id=incident.id)
        return incident.id


def claim(container: Container, now: datetime) -> JobClaim | None:
    with transaction(container.sessions) as db:
        jobs = briefings.claim_due_jobs(db_session=db, lease_s=LEASE_S, now=now)
        return JobClaim(jobs[0].id, jobs[0].attempts, jobs[0].incident_id, True) if jobs else None


def renew_lease(container: Container, held: JobClaim) -> bool:
    with transaction(container.sessions) as db:
        alive = briefings.renew_job_lease(
            db_session=db, job_id=held.job_id, attempts=held.attempts, lease_s=LEASE_S
        )
        db.commit()
        return alive


def test_a_renewed_lease_outlives_its_length_and_lapses_once_renewal_stops(container: Container) -> None:
    queue_job(container)
    claimed_at = utcnow()
    held = claim(container, claimed_at)
    assert held is not None
    renewals: list[datetime] = []

    def renew() -> bool:
        alive = renew_lease(container, held)
        renewals.append(utcnow())
        return alive

    with Heartbeat(renew, lease_s=LEASE_S, what="test job") as beat:
        wait_for(lambda: len(renewals) >= 4, timeout=10, what="four renewals, past the first expiry")
        # Asked as of the last renewal, past the unrenewed lease's end, not of whenever this thread
        # runs next on a loaded machine.
        assert renewals[-1] > claimed_at + timedelta(seconds=LEASE_S)
        assert claim(container, renewals[-1]) is None
    assert not beat.lost

    taken = claim(container, renewals[-1] + timedelta(seconds=LEASE_S + 0.01))
    assert taken is not None and taken.job_id == held.job_id and taken.attempts == 2
    assert not renew_lease(container, held)


def test_a_heartbeat_whose_lease_is_gone_stops_and_says_so() -> None:
    calls: list[int] = []

    def renew() -> bool:
        calls.append(1)
        return False

    with Heartbeat(renew, lease_s=0.6, what="gone") as beat:
        wait_for(lambda: beat.lost, timeout=5, what="the heartbeat to notice")
    assert calls == [1]


async def test_a_job_taken_over_from_a_stalled_worker_is_briefed_once(container: Container) -> None:
    incident_id = queue_job(container)
    now = utcnow()
    stalled = claim(container, now)
    taken = claim(container, now + timedelta(seconds=LEASE_S + 0.01))
    assert stalled is not None and taken is not None and taken.attempts == 2
    briefing = await brief_incident(container, incident_id=incident_id)
    assert briefing is not None

    assert store_for_job(container, stalled, briefing) is None
    stored = store_for_job(container, taken, briefing)
    assert stored is not None and stored.version == 1
    assert store_for_job(container, taken, briefing) is None  # finished: the claim holds nothing now
    with container.sessions() as db:
        assert db.scalar(select(func.count(Briefing.id))) == 1
        assert db.scalar(select(Job.state)) == "done"
