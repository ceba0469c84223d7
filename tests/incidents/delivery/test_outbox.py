"""The delivery outbox on SQLite and PostgreSQL: routing, leases, order per thread, failure states."""

import threading
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory
from incidents.delivery import outbox
from incidents.delivery.models import Delivery
from incidents.delivery.routing import TEST, ChannelRoute, sync_channels
from incidents.locking import serialized_writes
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident


def channels(db: Session, *names: str) -> None:
    sync_channels(db_session=db, routes=[ChannelRoute(name=n, kind="webhook", label=n) for n in names])


def test_an_event_owes_one_row_per_matching_channel_in_the_same_transaction(db: Session) -> None:
    channels(db, "a", "b")
    incident = make_incident(db)
    assert outbox.owe(db_session=db, incident=incident, event="incident_acknowledged") == 2
    db.rollback()
    assert db.scalars(select(Delivery)).all() == []


def test_a_channel_dropped_from_the_configuration_is_owed_nothing_more(db: Session) -> None:
    channels(db, "a", "b")
    channels(db, "b")
    incident = make_incident(db)
    outbox.owe(db_session=db, incident=incident, event="incident_acknowledged")
    assert [row.channel for row in db.scalars(select(Delivery))] == ["b"]


def test_a_thread_is_delivered_in_order_one_row_at_a_time(db: Session) -> None:
    channels(db, "a")
    incident = make_incident(db)
    for event in ("briefing_stored", "incident_acknowledged"):
        outbox.owe(db_session=db, incident=incident, event=event)
    first = outbox.claim_due(db_session=db, limit=10, lease_s=60)
    assert [claim.event for claim in first] == ["briefing_stored"]
    assert outbox.claim_due(db_session=db, limit=10, lease_s=60) == []  # leased, and the next waits
    outbox.complete(db_session=db, claim=first[0], ref="1700.1")
    [second] = outbox.claim_due(db_session=db, limit=10, lease_s=60)
    assert second.event == "incident_acknowledged"
    assert outbox.thread_ref(db_session=db, incident_id=incident.id, channel="a") == "1700.1"


def fail_due(db: Session, now: datetime, window_s: float = 1800) -> tuple[str, datetime]:
    """Claim the one due row at ``now``, fail it as a 503 would; its state and when it is due next."""
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60, now=now)
    state = outbox.fail(
        db_session=db, claim=claim, error="503 from x", retry=True, retry_for_s=window_s, now=now
    )
    return state, db.get_one(Delivery, claim.id, populate_existing=True).next_attempt_at


def test_a_receiver_down_for_minutes_loses_nothing_the_window_ends_with_a_last_try(db: Session) -> None:
    """Retries are budgeted by time: however many failures ten minutes of outage bring, it stays owed."""
    channels(db, "a")
    outbox.owe(db_session=db, incident=make_incident(db), event="incident_acknowledged")
    queued = db.scalars(select(Delivery)).one().created_at
    now, tries = queued, 0
    while now < queued + timedelta(minutes=10):
        state, now = fail_due(db, now)
        assert state == "failing"
        tries += 1
    assert tries > 8  # more than the old budget of attempts, and still owed
    end = queued + timedelta(seconds=1800)
    state, due = fail_due(db, end - timedelta(seconds=1))
    assert state == "failing" and due <= end  # the backoff never carries a try past the window
    assert fail_due(db, end)[0] == "failed"


def test_a_heartbeat_after_a_failed_send_leaves_the_row_due_at_its_next_attempt(db: Session) -> None:
    channels(db, "a")
    outbox.owe(db_session=db, incident=make_incident(db), event="incident_acknowledged")
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60)
    outbox.fail(db_session=db, claim=claim, error="503 from x", retry=True, retry_for_s=1800)
    assert outbox.MESSAGES.renew(db, [claim.lease], lease_s=60) == []
    row = db.get_one(Delivery, claim.id, populate_existing=True)
    assert row.state == "failing" and row.locked_until is None


def test_a_retry_after_holds_every_message_of_the_channel_and_no_other_channel(db: Session) -> None:
    channels(db, "a", "b")
    for n in (1, 2):  # two incidents: their rows are not held back by thread order
        outbox.owe(db_session=db, incident=make_incident(db, f"INC-{n}"), event="incident_acknowledged")
    now = utcnow()
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60, now=now, skip_channels=["b"])
    outbox.fail(
        db_session=db, claim=claim, error="429", retry=True, retry_after_s=30, retry_for_s=1800, now=now
    )
    queued_after = make_incident(db, "INC-3")
    outbox.owe(db_session=db, incident=queued_after, event="incident_acknowledged")
    due = outbox.claim_due(db_session=db, limit=10, lease_s=60, now=now + timedelta(seconds=29))
    assert {c.channel for c in due} == {"b"}  # channel b is not held
    later = outbox.claim_due(db_session=db, limit=10, lease_s=60, now=now + timedelta(seconds=31))
    assert [c.channel for c in later] == ["a"] * 3
    held = {line.channel: line.held_until for line in outbox.channel_status(db_session=db, now=now)}
    assert held == {"a": now + timedelta(seconds=30), "b": None}  # what `notify status` says
    assert all(
        line.held_until is None
        for line in outbox.channel_status(db_session=db, now=now + timedelta(seconds=31))
    )


def test_a_test_message_is_tried_once_and_never_revived(db: Session) -> None:
    channels(db, "a")
    outbox.owe_one(db_session=db, channel="a", event=TEST, data={"channel": "a"})
    state, _ = fail_due(db, utcnow())
    assert state == "failed"
    assert outbox.retry(db_session=db) == 0
    assert db.scalars(select(Delivery)).one().state == "failed"


def test_a_channels_status_says_when_its_last_error_happened(db: Session) -> None:
    channels(db, "a")
    for n in (1, 2):
        outbox.owe(db_session=db, incident=make_incident(db, f"INC-{n}"), event="incident_acknowledged")
    first = utcnow()
    fail_due(db, first)
    fail_due(db, first + timedelta(seconds=5))  # the other row, failing later
    [status] = outbox.channel_status(db_session=db)
    assert (status.last_error, status.last_error_at) == ("503 from x", first + timedelta(seconds=5))


def test_retryable_failures_back_off_until_the_window_is_spent_and_retry_revives_them(db: Session) -> None:
    channels(db, "a")
    incident = make_incident(db)
    outbox.owe(db_session=db, incident=incident, event="incident_acknowledged")
    later = utcnow()
    for attempt in (1, 2):
        later += timedelta(hours=1)
        assert fail_due(db, later, window_s=2 * 3600 - 1)[0] == ("failing" if attempt == 1 else "failed")
    assert outbox.claim_due(db_session=db, limit=1, lease_s=60, now=later + timedelta(days=1)) == []
    assert outbox.retry(db_session=db) == 1
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60)
    assert claim.attempts == 1  # a fresh budget: this claim is its first attempt
    assert claim.created_at > later - timedelta(hours=2)  # and a fresh window from now
    [status] = outbox.channel_status(db_session=db)
    assert status.counts["pending"] == 1 and status.last_error is None


def test_an_expired_lease_is_claimed_again(db: Session) -> None:
    channels(db, "a")
    outbox.owe(db_session=db, incident=make_incident(db), event="incident_acknowledged")
    [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=5)
    assert outbox.claim_due(db_session=db, limit=1, lease_s=5) == []
    [again] = outbox.claim_due(db_session=db, limit=1, lease_s=5, now=utcnow() + timedelta(seconds=6))
    assert again.id == claim.id


def test_two_claimers_never_get_the_same_row(database_url: str, db: Session) -> None:
    channels(db, "a")
    for n in range(40):
        outbox.owe(db_session=db, incident=make_incident(db, f"INC-{n:04d}"), event="incident_acknowledged")
    db.commit()
    engine = make_engine(database_url)
    sessions = make_session_factory(engine)
    taken: list[list[int]] = [[], []]
    start = threading.Barrier(2)

    def claimer(mine: list[int]) -> None:
        start.wait()
        while True:
            with sessions() as session, serialized_writes(session):
                claims = outbox.claim_due(db_session=session, limit=3, lease_s=60)
                session.commit()
            if not claims:
                return
            mine.extend(claim.id for claim in claims)

    threads = [threading.Thread(target=claimer, args=(mine,)) for mine in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    engine.dispose()
    assert not set(taken[0]) & set(taken[1])
    assert len(taken[0]) + len(taken[1]) == 40
