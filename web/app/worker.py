"""The background worker: drains job rows and the memory outbox until told to stop.

Each task is a coroutine that does the work that is due and reports whether it did any, so an idle
worker waits ``poll_s`` (or until woken) and a busy one keeps going. Work lives in database rows, so a
restart resumes where it stopped.
"""

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Task = Callable[[], Awaitable[bool]]


class Worker:
    def __init__(self, tasks: list[Task], poll_s: float = 0.5) -> None:
        self._tasks = tasks
        self._poll_s = poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """Called after a commit that created work, so it starts now rather than at the next poll."""
        self._wake.set()

    async def run_once(self) -> bool:
        did_work = False
        for task in self._tasks:
            try:
                did_work = await task() or did_work
            except Exception:
                log.exception("worker task failed", extra={"task": getattr(task, "__name__", repr(task))})
        return did_work

    async def run_forever(self) -> None:
        while not self._stop.is_set():
            if not await self.run_once():
                await asyncio.to_thread(self._wake.wait, self._poll_s)
                self._wake.clear()

    def start(self) -> None:
        self._thread = threading.Thread(target=asyncio.run, args=(self.run_forever(),), daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
