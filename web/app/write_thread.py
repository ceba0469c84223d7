"""Where alert intake's transactions run: on SQLite, one thread committing what has queued up together.

SQLite takes one writer at a time (``incidents.locking``). Sent to the shared worker pool, sixteen
concurrent deliveries made sixteen threads that each woke, took the GIL, found the write lock held and
slept again, and each delivery paid for its own session, ``BEGIN IMMEDIATE`` and commit. Queued for one
thread instead, the deliveries that arrived while the last commit ran are written in one transaction,
each in a savepoint of its own: one that fails (a value that does not fit, a token revoked meanwhile)
is rolled back alone and its sender gets the error, the others commit. Every sender is answered only
after the commit that holds its alerts, so an acknowledged alert is on disk as before; a commit that
fails fails every delivery in it, and their senders retry. Nothing waits for a batch to fill: a
delivery that finds the thread idle is written at once.

On PostgreSQL writers proceed side by side (row and advisory locks order them), so each delivery runs
in the shared pool in a transaction of its own.
"""

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from incidents.locking import serialized_writes

T = TypeVar("T")
BATCH = 64  # deliveries committed together at most


@dataclass(frozen=True)
class _Write(Generic[T]):
    fn: Callable[..., T]
    args: tuple[object, ...]
    loop: asyncio.AbstractEventLoop
    future: "asyncio.Future[T]"


class WriteThread:
    """``await write(fn, *args)``: ``fn(session, *args)`` in a transaction, committed before it returns."""

    def __init__(self, engine: Engine, sessions: sessionmaker[Session]) -> None:
        self._grouped = engine.dialect.name == "sqlite"
        self._sessions = sessions
        self._queue: queue.SimpleQueue[_Write[Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        if not self._grouped:
            return await run_in_threadpool(self._alone, fn, args)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._started().put(_Write(fn, args, loop, future))
        return await future

    def close(self) -> None:
        """Write what is queued (its senders are waiting for the answer), then stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _alone(self, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        with self._sessions() as db:  # closing the session rolls back whatever did not commit
            result = fn(db, *args)
            db.commit()
        return result

    def _started(self) -> "queue.SimpleQueue[_Write[Any] | None]":
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="recallops-intake", daemon=True)
                self._thread.start()
        return self._queue

    def _serve(self) -> None:
        while (first := self._queue.get()) is not None:
            batch = [first]
            while len(batch) < BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)  # stop after this batch
                    break
                batch.append(item)
            self._commit(batch)

    def _commit(self, batch: list[_Write[Any]]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        try:
            with self._sessions() as db, serialized_writes(db):
                for write in batch:
                    try:
                        with db.begin_nested():
                            outcomes.append((True, write.fn(db, *write.args)))
                    except Exception as exc:  # this delivery's own failure: its savepoint is rolled back
                        outcomes.append((False, exc))
                db.commit()
        except Exception as exc:  # the transaction failed: nothing of the batch was written
            outcomes = [(False, exc)] * len(batch)
        for write, (ok, value) in zip(batch, outcomes, strict=True):
            write.loop.call_soon_threadsafe(_settle, write.future, ok, value)


def _settle(future: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    if future.cancelled():  # the sender went away; what it sent is committed all the same
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
