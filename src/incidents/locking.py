"""One writer at a time where the database needs it.

SQLite allows a single writer. A transaction that reads first and writes later can fail with
``database is locked`` when another writer got in between, and waiting writers poll with growing
sleeps. So on SQLite a write unit takes an in-process lock (waiters queue instead of polling) and
starts with ``BEGIN IMMEDIATE`` (other processes, such as the CLI, wait on the busy timeout). On
PostgreSQL this is a no-op: row locks and advisory locks order concurrent writers there.
"""

import hashlib
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

_LOCKS: "weakref.WeakKeyDictionary[Engine, threading.Lock]" = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def _engine_lock(engine: Engine) -> threading.Lock:
    with _GUARD:
        lock = _LOCKS.get(engine)
        if lock is None:
            lock = _LOCKS[engine] = threading.Lock()
        return lock


@contextmanager
def serialized_writes(db_session: Session) -> Iterator[None]:
    """Run a write unit; the caller commits inside the block. Rolls back if the block raises."""
    bind = db_session.get_bind()
    engine = bind if isinstance(bind, Engine) else bind.engine
    if engine.dialect.name != "sqlite":
        yield
        return
    # The connection comes first: a writer holding the lock must never wait for the pool, which
    # requests queued behind the lock may have drained.
    connection = db_session.connection()
    with _engine_lock(engine):
        dbapi = connection.connection.dbapi_connection
        try:
            if dbapi is not None and not dbapi.in_transaction:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            yield
        finally:
            # Whatever the block did not commit is undone before the next writer may start
            # (after a commit this is a no-op; the connection may already be back in the pool).
            db_session.rollback()


def advisory_lock(db_session: Session, name: str) -> None:
    """Hold ``name`` until the caller's transaction ends, across every replica (PostgreSQL's
    transaction-scoped advisory lock, keyed by the name's hash). On SQLite, ``serialized_writes``
    already lets one writer in at a time, so this does nothing there."""
    if db_session.get_bind().dialect.name != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    db_session.execute(select(func.pg_advisory_xact_lock(key)))
