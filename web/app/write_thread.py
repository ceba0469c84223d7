"""The thread alert intake's transactions run in: one thread on SQLite, the shared pool elsewhere.

SQLite takes one writer at a time (``incidents.locking``). Sent to the shared worker pool, sixteen
concurrent deliveries made sixteen threads that each woke, took the GIL, found the write lock held
and slept again, and every hand-over of the lock was a thread switch. Queued for one thread, they wait
in the event loop instead and run back to back; the lock is still taken, for the other writers (the
briefing worker, the CLI). On PostgreSQL writers proceed side by side, so the shared pool is kept.
"""

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

T = TypeVar("T")


class WriteThread:
    """``await run(fn, *args)``: ``fn(*args)`` in the write thread (SQLite) or the shared pool."""

    def __init__(self, engine: Engine) -> None:
        single = engine.dialect.name == "sqlite"
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="recallops-intake") if single else None

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        if self._pool is None:
            return await run_in_threadpool(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(fn, *args))

    def close(self) -> None:
        """Let the transactions already queued finish (their senders are waiting for the answer)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
