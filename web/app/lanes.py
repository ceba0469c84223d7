"""The worker's lanes: each kind of owed work in a thread, an event loop and a thread pool of its own.

A lane runs at most ``concurrency`` items at once and nothing else: a receiver that drips, a model
that hangs or a memory layer that is down can fill only its own lane, so briefings never wait behind
a chat delivery. Work lives in database rows, so a restart resumes where it stopped.

A ``QueueLane`` drains one leased queue (``incidents.queue``): it claims as many due rows as it has
free slots, runs each as a task, and renews the leases of everything in flight from one heartbeat
thread, so neither a slow call nor a busy event loop lets a live lease lapse. A ``TaskLane`` runs a
periodic task (the profile refresh, grading) that reports whether it found work.

Adding a lane: write the claim (a function of a write session and a count) and the run (an async
function of one claim that records its own outcome), then add ``QueueLane(...)`` in
``web.app.tasks.build_lanes``; a new job kind is ``job_lane`` there.
"""

import asyncio
import logging
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.database import transaction
from incidents.locking import serialized_writes
from incidents.queue.heartbeat import Heartbeat
from incidents.queue.table import Backlog, Lease, Queue

log = logging.getLogger(__name__)

C = TypeVar("C")
Task = Callable[[], Awaitable[bool]]
Release = Callable[[], Awaitable[None]]
SPARE_THREADS = 2  # a lane's pool: one thread per slot, plus room for its claims and renewals


class Outcomes(Counter[str]):
    """How each claimed item of one drain ended (``sent``, ``synced``, ``failing``, ...), counted."""

    @property
    def attempted(self) -> int:
        return sum(self.values())


class Lane(ABC):
    """One kind of owed work, run on its own thread and event loop until stopped."""

    def __init__(self, name: str, *, concurrency: int, poll_s: float) -> None:
        self.name = name
        self.concurrency = concurrency
        self.poll_s = poll_s
        self.in_flight = 0
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @abstractmethod
    async def run_forever(self) -> None: ...

    def backlog(self) -> Backlog | None:
        """Rows owed across every replica, read now; None when the lane keeps no queue."""
        return None

    def wake(self) -> None:
        """Called after a commit that created work, so it starts now rather than at the next poll."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def idle(self, busy: set["asyncio.Task[Any]"]) -> None:
        """Wait for a woken lane, a finished item or the next poll, whichever comes first."""
        assert self._wake is not None
        waiter = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({waiter, *busy}, timeout=self.poll_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        self._wake.clear()

    def _main(self, release_loop: Release | None) -> None:
        loop = asyncio.new_event_loop()
        pool = ThreadPoolExecutor(self.concurrency + SPARE_THREADS, thread_name_prefix=f"lane {self.name}")
        loop.set_default_executor(pool)
        self._loop = loop
        try:
            self._wake = asyncio.Event()
            loop.run_until_complete(self.run_forever())
            if release_loop is not None:
                loop.run_until_complete(self._release(release_loop))
        finally:
            # Threads stuck in a call that outlived its deadline are not waited for (they were
            # abandoned and counted when the deadline passed).
            pool.shutdown(wait=False, cancel_futures=True)
            loop.close()

    async def _release(self, release_loop: Release) -> None:
        """What this loop opened elsewhere (the memory bank's HTTP session) is closed on it, within one
        poll, rather than left to the garbage collector, which logs it as an error at every stop."""
        try:
            async with asyncio.timeout(max(self.poll_s, 1.0)):
                await release_loop()
        except Exception:
            log.warning("lane could not close what its loop held", exc_info=True, extra={"lane": self.name})

    def start(self, release_loop: Release | None = None) -> None:
        """Run the lane on a thread of its own; ``release_loop`` runs on its loop once it has stopped."""
        self._thread = threading.Thread(
            target=self._main, args=(release_loop,), name=f"lane {self.name}", daemon=True
        )
        self._thread.start()

    def request_stop(self) -> None:
        self._stop.set()
        self.wake()

    def stop(self, timeout: float = 10.0) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)


class TaskLane(Lane):
    """A periodic task that reports whether it did any work: an idle one waits ``poll_s`` or a wake."""

    def __init__(self, name: str, task: Task, *, poll_s: float) -> None:
        super().__init__(name, concurrency=1, poll_s=poll_s)
        self.task = task

    async def run_forever(self) -> None:
        while not self.stopping:
            self.in_flight = 1
            try:
                did_work = await self.task()
            except Exception:
                log.exception("worker task failed", extra={"lane": self.name})
                did_work = False
            finally:
                self.in_flight = 0
            if not did_work:
                await self.idle(set())


@dataclass
class Leases:
    """The leases a lane holds right now, renewed together by one heartbeat."""

    queue: Queue
    sessions: sessionmaker[Session]
    lease_s: float
    held: dict[int, Lease] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, lease: Lease) -> None:
        with self.lock:
            self.held[lease.id] = lease

    def drop(self, lease: Lease) -> None:
        with self.lock:
            self.held.pop(lease.id, None)

    def renew(self) -> bool:
        with self.lock:
            if not self.held:
                return True
        with transaction(self.sessions) as db, serialized_writes(db):
            self.renew_in(db)
            db.commit()
        return True

    def snapshot(self) -> list[Lease]:
        with self.lock:
            return list(self.held.values())

    def release(self, leases: list[Lease]) -> None:
        """Give the rows back, due at once: a restarted worker sends them now, not after the lease. Each
        release is fenced, so a row whose outcome was recorded meanwhile is left as it is."""
        if not leases:
            return
        with transaction(self.sessions) as db, serialized_writes(db):
            for lease in leases:
                self.queue.release(db, lease)
            db.commit()

    def renew_in(self, db: Session) -> None:
        """Extend every lease held, in the caller's write transaction (it commits)."""
        leases = self.snapshot()
        if not leases:
            return
        kept = self.queue.renew(db, leases, lease_s=self.lease_s)
        for lost in set(leases) - set(kept):
            # Finished meanwhile, or taken over by another worker (whose result then stands).
            self.drop(lost)
            log.info("lease no longer held", extra={"row": lost.id})


class QueueLane(Lane, Generic[C]):
    """Drains one leased queue, up to ``concurrency`` claims in flight, leases renewed while they run."""

    def __init__(
        self,
        name: str,
        *,
        queue: Queue,
        sessions: sessionmaker[Session],
        claim: Callable[[Session, int], list[C]],
        run: Callable[[C], Awaitable[str]],
        lease_of: Callable[[C], Lease],
        lease_s: float,
        concurrency: int,
        poll_s: float,
    ) -> None:
        super().__init__(name, concurrency=concurrency, poll_s=poll_s)
        self.queue = queue
        self.sessions = sessions
        self._claim = claim
        self._run = run
        self._lease_of = lease_of
        self.leases = Leases(queue, sessions, lease_s)

    def backlog(self) -> Backlog | None:
        try:
            with self.sessions() as db:
                return self.queue.backlog(db)
        except SQLAlchemyError:
            log.warning("lane backlog failed", extra={"lane": self.name}, exc_info=True)
            return None

    def claim(self, limit: int) -> list[C]:
        """Claim up to ``limit`` due rows, renewing first what this lane still runs: a lease that lapsed
        because its renewal came late (a stalled machine, a laptop waking) is still this lane's work, and
        claiming it again here would run it twice side by side, the first result dropped as taken over."""
        with transaction(self.sessions) as db, serialized_writes(db):
            self.leases.renew_in(db)
            claims = self._claim(db, limit)
            db.commit()
        return claims

    async def run(self, claim: C) -> str:
        """Run one claim while its lease is renewed; an unexpected error is logged, never raised."""
        lease = self._lease_of(claim)
        self.leases.add(lease)
        self.in_flight += 1
        try:
            return await self._run(claim)
        except Exception:
            log.exception("lane item failed", extra={"lane": self.name, "row": lease.id})
            return "error"
        finally:
            self.in_flight -= 1
            self.leases.drop(lease)

    async def drain_once(self, limit: int) -> Outcomes:
        """Claim up to ``limit`` due rows and run them, ``concurrency`` at a time; their outcomes."""
        claims = await asyncio.to_thread(self.claim, limit)
        slots = asyncio.Semaphore(self.concurrency)

        async def one(claim: C) -> str:
            async with slots:
                return await self.run(claim)

        with Heartbeat(self.leases.renew, lease_s=self.leases.lease_s, what=self.name):
            return Outcomes(await asyncio.gather(*(one(claim) for claim in claims)))

    async def run_forever(self) -> None:
        busy: set[asyncio.Task[str]] = set()
        with Heartbeat(self.leases.renew, lease_s=self.leases.lease_s, what=self.name):
            while not self.stopping:
                free = self.concurrency - len(busy)
                claims: list[C] = []
                if free > 0:
                    try:
                        claims = await asyncio.get_running_loop().run_in_executor(None, self.claim, free)
                    except Exception:
                        log.exception("lane claim failed", extra={"lane": self.name})
                for claim in claims:
                    task = asyncio.create_task(self.run(claim))
                    busy.add(task)
                    task.add_done_callback(busy.discard)
                if claims and len(busy) < self.concurrency:
                    continue  # there may be more due right now
                await self.idle(set(busy))
            if busy:  # stopping: what has not finished is cancelled, and its rows given back
                await asyncio.wait(busy, timeout=self.poll_s)
                unfinished = self.leases.snapshot()
                for task in busy:
                    task.cancel()
                await asyncio.gather(*busy, return_exceptions=True)
                await self._give_back(unfinished)

    async def _give_back(self, leases: list[Lease]) -> None:
        try:
            await asyncio.to_thread(self.leases.release, leases)
        except Exception:  # the leases still run out: the rows are due again after them
            log.exception("lane release failed", extra={"lane": self.name})


class Worker:
    """Every lane of this process, started and stopped together; ``wake`` nudges them all."""

    def __init__(self, lanes: list[Lane], *, release_loop: Release | None = None) -> None:
        self.lanes = lanes
        self.release_loop = release_loop  # what each lane's loop must close before it ends

    def wake(self) -> None:
        for lane in self.lanes:
            lane.wake()

    def start(self) -> None:
        for lane in self.lanes:
            lane.start(self.release_loop)

    def stop(self, timeout: float = 10.0) -> None:
        for lane in self.lanes:
            lane.request_stop()
        for lane in self.lanes:
            lane.stop(timeout)
