"""CPU-bound request work (parsing an import) in a process of its own, never in a thread of the server's.

A worker thread keeps such work off the event loop's turn but not off its interpreter: pure-Python
parsing holds the GIL, and the loop's thread waits up to the switch interval (5 ms) each time it asks
for it back, several times per request, so ``/healthz`` took tens to hundreds of milliseconds while a
2 MiB junk import was parsed beside it. One worker process, spawned on first use (never forked from
this threaded process) and kept, runs such calls one at a time at a lower CPU priority than the
server, so on a busy machine the parse waits rather than the loop; only its result crosses back.
"""

import asyncio
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")
NICENESS = 10  # the worker yields the CPU to the server's own threads: a health check outranks a parse


class WorkerDied(RuntimeError):
    """The worker process ended during a call (killed, out of memory): the call may be sent again."""


class Offload:
    """One spawned worker process for calls that would hold the GIL for long."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    async def call(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` in the worker process; ``fn``, its arguments and its result must pickle."""
        pool = self._executor()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
        except BrokenProcessPool as exc:
            self._drop(pool)  # the next call starts a new worker
            raise WorkerDied("the worker process ended during the call") from exc

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                spawn = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=spawn, initializer=os.nice, initargs=(NICENESS,)
                )
            return self._pool

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)
