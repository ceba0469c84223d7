"""Lanes keep kinds of work apart: a chat receiver that drips or hangs never holds up a briefing."""

import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from incidents.briefings import service as briefings
from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.delivery import outbox
from incidents.delivery.models import Delivery
from incidents.delivery.routing import INCIDENT_ACKNOWLEDGED
from incidents.queue.table import Lease
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident
from tests.support.chaos import ChaosReceiver
from tests.support.net import wait_for
from tests.web.http.routes.conftest import configure
from web.app.briefings import briefing_lane
from web.app.container import Container
from web.app.lanes import Worker
from web.app.notify.deliver import delivery_lane
from web.app.tasks import build_lanes, lane_status


@pytest.fixture
def stuck() -> Iterator[list[ChaosReceiver]]:
    receivers = [ChaosReceiver("drip", drip_s=0.5).start(), ChaosReceiver("hang").start()]
    yield receivers
    for receiver in receivers:
        receiver.stop()


@pytest.fixture
async def container(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stuck: list[ChaosReceiver]
) -> AsyncIterator[Container]:
    channels = [{"name": r.mode, "kind": "webhook", "url": r.url} for r in stuck]
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps(channels))
    monkeypatch.setenv("RECALLOPS_NOTIFY_TIMEOUT_S", "120")  # the receivers outlast the test
    monkeypatch.setenv("RECALLOPS_WORKER_POLL_S", "0.1")
    built = Container.build(configure(monkeypatch, tmp_path / "data", database_url))
    built.notifier.sync(built.sessions)  # as the service does at start
    yield built
    await built.aclose()


def owe_briefing(container: Container, n: int) -> int:
    with transaction(container.sessions) as db:
        incident = make_incident(db, f"INC-{n:04d}")
        briefings.enqueue_briefing(db_session=db, incident_id=incident.id)
        db.commit()
        return incident.id


def briefed(container: Container, incident_id: int) -> bool:
    with container.sessions() as db:
        return briefings.latest_briefing(db_session=db, incident_id=incident_id) is not None


def test_briefings_go_on_while_every_send_is_stuck_on_a_receiver(
    container: Container, stuck: list[ChaosReceiver]
) -> None:
    worker = Worker(build_lanes(container))
    container.worker = worker
    worker.start()
    first = owe_briefing(container, 1)
    worker.wake()
    wait_for(lambda: briefed(container, first), timeout=60, what="the first briefing")
    # Its messages are owed to both receivers, which take them in and never finish answering.
    wait_for(lambda: all(r.requests == 1 for r in stuck), timeout=30, what="both sends under way")

    later = [owe_briefing(container, n) for n in (2, 3, 4)]
    worker.wake()
    wait_for(lambda: all(briefed(container, i) for i in later), timeout=60, what="the later briefings")
    # Every send a receiver took in is still open (the later briefings' messages may be joining them: a
    # receiver counts a request a moment after its connection).
    wait_for(
        lambda: all(r.open_connections == r.requests >= 1 for r in stuck),
        timeout=10,
        what="the stuck sends still in flight",
    )
    status = lane_status(worker.lanes)
    assert status["delivery"]["in_flight"] >= 2 and status["briefing"]["depth"] == 0


def test_a_stopping_lane_gives_back_the_rows_it_was_sending_so_a_restart_sends_them_at_once(
    container: Container, stuck: list[ChaosReceiver]
) -> None:
    with transaction(container.sessions) as db:
        owed = [
            outbox.owe_one(db_session=db, channel=r.mode, event=INCIDENT_ACKNOWLEDGED, data={}).id
            for r in stuck
        ]
        db.commit()
    worker = Worker([delivery_lane(container.sessions, container.notifier, poll_s=0.1)])
    worker.start()
    wait_for(lambda: all(r.requests == 1 for r in stuck), timeout=30, what="both sends under way")
    worker.stop()

    def given_back() -> bool:
        with container.sessions() as db:
            rows = [db.get_one(Delivery, row_id) for row_id in owed]
        return all(row.locked_until is None for row in rows)

    wait_for(given_back, timeout=10, what="the rows given back")
    with container.sessions() as db:
        rows = [db.get_one(Delivery, row_id) for row_id in owed]
    assert [(row.state, row.attempts) for row in rows] == [("pending", 1)] * 2  # the attempt counted


@pytest.fixture
async def quiet(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Container]:
    """A container with no chat channels: only the jobs queue matters here."""
    built = Container.build(configure(monkeypatch, tmp_path / "data", database_url))
    yield built
    await built.aclose()


def lapse(container: Container, job_id: int) -> None:
    """The lease runs out while its work still runs, as when the machine stalls past a renewal."""
    with transaction(container.sessions) as db:
        db.execute(update(Job).where(Job.id == job_id).values(locked_until=utcnow() - timedelta(seconds=1)))
        db.commit()


def job_row(container: Container, job_id: int) -> Job:
    with container.sessions() as db:
        job = db.get(Job, job_id)
        assert job is not None
        return job


def test_a_lane_never_claims_again_what_it_still_runs_though_its_lease_lapsed(quiet: Container) -> None:
    owe_briefing(quiet, 1)
    lane = briefing_lane(quiet)
    [running] = lane.claim(1)
    lane.leases.add(Lease(running.job_id, running.attempts))
    lapse(quiet, running.job_id)

    assert lane.claim(2) == []
    job = job_row(quiet, running.job_id)
    assert job.attempts == running.attempts and job.locked_until is not None
    assert job.locked_until > utcnow()

    # Another worker (a lane that does not run it) still takes over a lease that lapsed with its worker.
    lane.leases.drop(Lease(running.job_id, running.attempts))
    lapse(quiet, running.job_id)
    [taken] = briefing_lane(quiet).claim(1)
    assert (taken.job_id, taken.attempts) == (running.job_id, running.attempts + 1)
