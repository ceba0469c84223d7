"""The outbox's claim, completion and backoff rules, on SQLite and on PostgreSQL."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory, upgrade
from incidents.resolution import outbox
from incidents.resolution.models import OutboxEntry
from incidents.timeutil import utcnow


def owe(db: Session, document_id: str, version: int = 1) -> OutboxEntry:
    return outbox.enqueue(
        db_session=db,
        incident_id=None,
        document_id=document_id,
        kind="incident",
        payload={"version": version},
    )


def test_a_claimed_row_is_leased_to_one_claimer_until_the_lease_ends(db: Session) -> None:
    owe(db, "INC-0001")
    now = utcnow()
    [claim] = outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now)
    assert outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now + timedelta(seconds=59)) == []
    [again] = outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now + timedelta(seconds=61))
    assert again.id == claim.id


def test_a_delivery_of_an_older_generation_does_not_mark_the_row_synced(db: Session) -> None:
    owe(db, "INC-0001", version=1)
    [stale] = outbox.claim_due(db_session=db, limit=5, lease_s=60)
    owe(db, "INC-0001", version=2)

    assert not outbox.complete(db_session=db, claim=stale)
    [fresh] = outbox.claim_due(db_session=db, limit=5, lease_s=60)
    assert fresh.id == stale.id and fresh.payload == {"version": 2}
    assert outbox.complete(db_session=db, claim=fresh)
    db.expire_all()
    assert [e.state for e in db.scalars(select(OutboxEntry))] == ["synced"]


def test_a_failure_backs_off_keeps_the_error_and_retry_failed_makes_it_due(db: Session) -> None:
    owe(db, "INC-0001")
    now = utcnow()
    [claim] = outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now)
    next_at = outbox.fail(db_session=db, claim=claim, error="MemoryUnavailable: timed out", now=now)
    assert now + timedelta(seconds=1) <= next_at <= now + timedelta(seconds=1.001)
    assert outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now) == []
    stats = outbox.queue_stats(db_session=db)
    assert (stats.pending, stats.failing, stats.depth) == (0, 1, 1)
    assert stats.oldest_unsynced_at is not None

    assert outbox.retry_failed(db_session=db, now=now) == 1
    [retry] = outbox.claim_due(db_session=db, limit=5, lease_s=60, now=now)
    assert retry.attempts == 2  # every claim counts an attempt


def test_a_synced_document_written_again_gets_a_new_row(db: Session) -> None:
    first = owe(db, "INC-0001")
    [claim] = outbox.claim_due(db_session=db, limit=5, lease_s=60)
    outbox.complete(db_session=db, claim=claim)
    second = owe(db, "INC-0001", version=2)
    assert second.id != first.id
    assert outbox.newest_sync(db_session=db) is not None


@pytest.fixture
def pg_engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.mark.postgres
def test_postgres_claims_skip_rows_another_open_claim_holds(pg_engine: Engine) -> None:
    sessions = make_session_factory(pg_engine)
    with sessions() as db:
        for n in range(6):
            owe(db, f"INC-{n:04d}")
        db.commit()
    first, second = sessions(), sessions()
    try:
        a = outbox.claim_due(db_session=first, limit=4, lease_s=60)  # not committed: rows stay locked
        b = outbox.claim_due(db_session=second, limit=4, lease_s=60)  # would block without SKIP LOCKED
        assert len(a) == 4 and len(b) == 2
        assert not {c.id for c in a} & {c.id for c in b}
        first.commit()
        second.commit()
    finally:
        first.close()
        second.close()
    with sessions() as third:
        assert outbox.claim_due(db_session=third, limit=10, lease_s=60) == []


documents = st.sampled_from(["INC-0001", "INC-0002", "INC-0003"])
steps = st.lists(
    st.one_of(
        st.tuples(st.just("write"), documents),
        st.tuples(st.just("claim"), st.integers(0, 1)),
        st.tuples(st.just("deliver"), st.integers(0, 1)),
        st.tuples(st.just("fail"), st.integers(0, 1)),
    ),
    max_size=30,
)


@settings(max_examples=60)
@given(steps)
def test_any_interleaving_of_two_workers_delivers_each_version_once_and_ends_current(
    tmp_path_factory: pytest.TempPathFactory, script: list[tuple[str, object]]
) -> None:
    """Two workers claim, deliver and fail in any order: no row is ever held by both, no stale
    version is marked synced, and draining at the end leaves memory with every document's last write."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('outbox') / 'o.db'}")
    upgrade(engine)
    db = make_session_factory(engine)()
    memory: dict[str, int] = {}
    latest: dict[str, int] = {}
    held: list[list[outbox.Claim]] = [[], []]
    try:
        for action, arg in script:
            if action == "write":
                latest[str(arg)] = latest.get(str(arg), 0) + 1
                owe(db, str(arg), latest[str(arg)])
            elif action == "claim":
                got = outbox.claim_due(db_session=db, limit=2, lease_s=3600)
                other = {c.id for c in held[1 - int(arg)]}
                assert not other & {c.id for c in got}
                held[int(arg)] += got
            elif held[int(arg)]:
                claim = held[int(arg)].pop(0)
                if action == "deliver":
                    memory[claim.document_id] = claim.payload["version"]
                    outbox.complete(db_session=db, claim=claim)
                else:
                    outbox.fail(db_session=db, claim=claim, error="down")
            db.commit()
        for claim in held[0] + held[1]:
            outbox.MEMORY_WRITES.release(db, claim.lease)
        outbox.retry_failed(db_session=db)
        while claims := outbox.claim_due(db_session=db, limit=10, lease_s=3600):
            for claim in claims:
                memory[claim.document_id] = claim.payload["version"]
                outbox.complete(db_session=db, claim=claim)
            db.commit()
        assert memory == latest
        assert outbox.queue_stats(db_session=db).depth == 0
    finally:
        db.close()
        engine.dispose()


def test_renewal_extends_only_the_rows_still_held_under_the_claimed_lease(db: Session) -> None:
    for n in (1, 2, 3):
        owe(db, f"INC-000{n}")
    now = utcnow()
    claims = outbox.claim_due(db_session=db, limit=5, lease_s=10, now=now)
    first, second, third = claims
    assert outbox.complete(db_session=db, claim=first)
    later = now + timedelta(seconds=11)  # the batch's worker stalled; another takes the third row over
    [taken] = outbox.claim_due(db_session=db, limit=1, lease_s=10, now=later)
    assert taken.id == second.id

    held = outbox.MEMORY_WRITES.renew(db, [c.lease for c in claims], lease_s=10, now=later)
    assert held == [third.lease]
    db.expire_all()
    leases = {e.id: e.locked_until for e in db.scalars(select(OutboxEntry))}
    renewed = later + timedelta(seconds=10)
    assert leases == {first.id: None, second.id: renewed, third.id: renewed}


def test_a_row_synced_by_the_worker_that_took_it_over_is_not_synced_again(db: Session) -> None:
    owe(db, "INC-0001")
    now = utcnow()
    [stale] = outbox.claim_due(db_session=db, limit=1, lease_s=10, now=now)
    [fresh] = outbox.claim_due(db_session=db, limit=1, lease_s=10, now=now + timedelta(seconds=11))
    assert outbox.complete(db_session=db, claim=fresh)
    assert not outbox.complete(db_session=db, claim=stale)
    db.expire_all()
    [entry] = db.scalars(select(OutboxEntry))
    assert entry.state == "synced"
