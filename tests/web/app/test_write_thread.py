"""Where alert intake's transactions run: on SQLite one thread committing what queued up together, each
delivery in its own savepoint; elsewhere side by side, each in its own transaction."""

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory
from web.app.write_thread import WriteThread


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE parent (id INTEGER PRIMARY KEY)"))
        connection.execute(
            text(
                "CREATE TABLE row (name TEXT PRIMARY KEY, parent_id INTEGER"
                " REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
            )
        )
    yield engine
    engine.dispose()


def _insert(name: str, parent_id: int | None = None) -> Callable[[Session], str]:
    def write(db: Session) -> str:
        db.execute(text("INSERT INTO row (name, parent_id) VALUES (:n, :p)"), {"n": name, "p": parent_id})
        return threading.current_thread().name

    return write


def _fail_after(name: str) -> Callable[[Session], str]:
    def write(db: Session) -> str:
        _insert(name)(db)
        raise ValueError(f"{name} refused")

    return write


def _rows(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return sorted(connection.execute(text("SELECT name FROM row")).scalars())


async def _queued_behind_a_held_write(
    writer: WriteThread, writes: list[Callable[[Session], str]]
) -> list[Any]:
    """Hold the thread in one write while ``writes`` queue up, so they are committed together."""
    held = threading.Event()

    def hold(db: Session) -> str:
        held.wait(10)
        return "held"

    first = asyncio.ensure_future(writer.write(hold))
    await asyncio.sleep(0.05)  # the thread has taken the first write; the rest queue behind it
    rest = [asyncio.ensure_future(writer.write(w)) for w in writes]
    await asyncio.sleep(0)
    held.set()
    await first
    return list(await asyncio.gather(*rest, return_exceptions=True))


def test_writes_run_in_one_thread_that_is_not_the_loops(engine: Engine) -> None:
    writer = WriteThread(engine, make_session_factory(engine))

    async def main() -> list[str]:
        return list(await asyncio.gather(*(writer.write(_insert(f"r{i}")) for i in range(8))))

    try:
        threads = asyncio.run(main())
    finally:
        writer.close()
    assert len(set(threads)) == 1 and threads[0] != threading.main_thread().name
    assert _rows(engine) == [f"r{i}" for i in range(8)]


def test_a_failing_write_is_undone_alone_and_its_caller_gets_the_error(engine: Engine) -> None:
    writer = WriteThread(engine, make_session_factory(engine))
    try:
        outcomes = asyncio.run(
            _queued_behind_a_held_write(writer, [_insert("a"), _fail_after("b"), _insert("c")])
        )
    finally:
        writer.close()
    assert isinstance(outcomes[1], ValueError) and str(outcomes[1]) == "b refused"
    assert isinstance(outcomes[0], str) and isinstance(outcomes[2], str)
    assert _rows(engine) == ["a", "c"]


def test_a_commit_that_fails_fails_every_write_it_held(engine: Engine) -> None:
    writer = WriteThread(engine, make_session_factory(engine))
    try:  # the missing parent is noticed only at COMMIT (a deferred foreign key)
        outcomes = asyncio.run(_queued_behind_a_held_write(writer, [_insert("a"), _insert("orphan", 7)]))
    finally:
        writer.close()
    assert all(isinstance(outcome, IntegrityError) for outcome in outcomes)
    assert _rows(engine) == []


def test_close_writes_what_is_queued(engine: Engine) -> None:
    writer = WriteThread(engine, make_session_factory(engine))

    async def main() -> None:
        calls = [asyncio.ensure_future(writer.write(_insert(f"r{i}"))) for i in range(5)]
        await asyncio.sleep(0)  # the writes are queued
        writer.close()
        await asyncio.gather(*calls)

    asyncio.run(main())
    assert _rows(engine) == [f"r{i}" for i in range(5)]


def test_elsewhere_writes_run_side_by_side() -> None:
    engine = create_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")  # never connected
    writer = WriteThread(engine, make_session_factory(engine))
    both = threading.Barrier(2, timeout=10)

    async def main() -> list[int]:
        return list(await asyncio.gather(*(writer.write(lambda _db: both.wait()) for _ in range(2))))

    assert sorted(asyncio.run(main())) == [0, 1]  # one thread alone would break the barrier
    writer.close()
