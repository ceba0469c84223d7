"""SQLite write units: one writer at a time, and nothing left open whatever happens inside."""

import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from incidents.locking import serialized_writes


def _engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    # NullPool closes each connection as it is returned: a commit inside the block releases it at once.
    engine = create_engine(f"sqlite:///{tmp_path / 'w.db'}", poolclass=NullPool)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (n INTEGER)"))
    return engine


def test_commit_inside_the_block_even_when_the_connection_is_gone(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    with Session(engine) as session:
        with serialized_writes(session):
            session.execute(text("INSERT INTO t VALUES (1)"))
            session.commit()
        assert session.scalar(text("SELECT count(*) FROM t")) == 1


def test_uncommitted_work_is_rolled_back(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    with Session(engine) as session:
        with pytest.raises(RuntimeError), serialized_writes(session):
            session.execute(text("INSERT INTO t VALUES (1)"))
            raise RuntimeError("boom")
        with serialized_writes(session):
            session.execute(text("INSERT INTO t VALUES (2)"))
        assert session.scalar(text("SELECT count(*) FROM t")) == 0


def test_read_then_write_units_do_not_collide(tmp_path: Path) -> None:
    """Each unit reads, then writes what it read plus one: serialized, no update is lost."""
    engine = _engine(tmp_path)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO t VALUES (0)"))
    failures: list[str] = []

    def bump() -> None:
        try:
            for _ in range(20):
                with Session(engine) as session, serialized_writes(session):
                    value = session.scalar(text("SELECT n FROM t"))
                    session.execute(text("UPDATE t SET n = :n"), {"n": value + 1})
                    session.commit()
        except Exception as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    with Session(engine) as session:
        assert session.scalar(text("SELECT n FROM t")) == 80
