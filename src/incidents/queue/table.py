"""A leased queue over one table: claim, renew, complete, fail, release and the figures of its backlog.

A table qualifies when it has ``id``, ``state``, ``attempts``, ``last_error``, ``locked_until``,
``created_at`` and a column saying when the row is next due. Life of a row::

    open --claim (lease, attempts + 1)--> done
      ^                              \\--> retry state (last_error, due = now + delay) --due--+
      |                               \\-> failed (not worth a retry, or the budget is spent)
      +-------------------------------------------------------------------------------------+

Guarantees, and how:
- **Two workers never hold the same row.** A claim is one ``UPDATE ... RETURNING`` over rows that are
  open, due and unleased (or whose lease ran out); on PostgreSQL its subquery takes them
  ``FOR UPDATE SKIP LOCKED``, so concurrent claimers skip each other's rows instead of waiting; on
  SQLite the statement runs under the single write lock.
- **Fencing.** Every claim counts an attempt, and the attempt number is the claim's token: renewing,
  completing, failing and releasing all match it, so a worker that lost its lease (it stalled past the
  expiry and another took the row over) can neither extend nor finish what it no longer holds. Renewing
  and releasing also need the lease still there: a heartbeat that comes just after a failure was
  recorded must not lease the row again, past the next attempt it is due for.
- **Attempts are bounded.** A row that keeps failing, or whose workers keep dying mid-attempt, ends
  ``failed`` once it has used ``max_attempts`` claims, or when it fails at or after ``retry_until``
  (a queue may have no budget and never give up).
- **One backoff rule** (``incidents.queue.backoff``), or the receiver's ``Retry-After`` when it sent one.

Functions flush nothing and commit nothing: the caller owns the transaction.
"""

from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any, Self

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import InstrumentedAttribute, Session

from incidents.database import rowcount
from incidents.queue.backoff import backoff_delay
from incidents.timeutil import utcnow

FAILED = "failed"
OUTBOX_OPEN_STATES = ("pending", "failing")
GAVE_UP = "lease expired too many times (the worker stopped mid-attempt)"


@dataclass(frozen=True)
class Lease:
    """A claimed row: its id and the attempt number that fences this claim."""

    id: int
    attempts: int


@dataclass(frozen=True)
class Claimed:
    """What a queue's claim carries first: the row's id and its fencing attempt number. Each queue's
    claim extends it with what its worker needs, and hands ``lease`` back to complete or fail it."""

    id: int
    attempts: int

    @property
    def lease(self) -> Lease:
        return Lease(self.id, self.attempts)

    @classmethod
    def of(cls, row: Any) -> Self:
        """The claim of a claimed row: each of the claim's fields read from the row's same-named column."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})


@dataclass(frozen=True)
class Backlog:
    """A queue at a glance: rows owed, the age of the oldest, and how many are leased right now."""

    depth: int
    oldest_s: float
    leased: int


@dataclass(frozen=True)
class Queue:
    """One table of owed work. ``model`` is the mapped class; ``due`` its next-due column.

    ``open_states`` may be claimed when due; ``leased_state``, when set, is the state a claimed row
    takes (and may be claimed again once its lease runs out); a failure worth retrying leaves the row
    in ``retry_state``, a success in ``done_state``; ``ended_at`` names the column stamped when a row
    ends either way.
    """

    model: Any
    due: InstrumentedAttribute[datetime]
    open_states: tuple[str, ...]
    retry_state: str
    done_state: str
    leased_state: str | None = None
    ended_at: str | None = None
    max_error_chars: int = 2000
    scope: tuple[ColumnElement[bool], ...] = field(default=())

    @classmethod
    def outbox(cls, model: Any, *, done_state: str, max_error_chars: int) -> "Queue":
        """An outbox table: rows ``pending`` or ``failing``, due at ``next_attempt_at``."""
        return cls(
            model=model,
            due=model.next_attempt_at,
            open_states=OUTBOX_OPEN_STATES,
            retry_state="failing",
            done_state=done_state,
            max_error_chars=max_error_chars,
        )

    def scoped(self, *where: ColumnElement[bool]) -> "Queue":
        """The same table narrowed to some of its rows (one job kind): a lane of its own."""
        return replace(self, scope=self.scope + where)

    @property
    def held_states(self) -> tuple[str, ...]:
        return self.open_states + ((self.leased_state,) if self.leased_state else ())

    def _fenced(self, lease: Lease) -> tuple[ColumnElement[bool], ...]:
        m = self.model
        return (m.id == lease.id, m.attempts == lease.attempts, m.state.in_(self.held_states))

    def _leased(self, lease: Lease) -> tuple[ColumnElement[bool], ...]:
        """Fenced, and still leased: a row failed, completed or released has no lease to renew or give
        back (a failed one stays in an open state with the same attempt number)."""
        return (*self._fenced(lease), self.model.locked_until.is_not(None))

    def claim(
        self,
        db_session: Session,
        *,
        limit: int,
        lease_s: float,
        max_attempts: int | None = None,
        where: tuple[ColumnElement[bool], ...] = (),
        now: datetime | None = None,
    ) -> list[Lease]:
        """Lease up to ``limit`` due rows, oldest due first; rows past their budget end failed instead."""
        if limit <= 0:
            return []
        now = now or utcnow()
        m = self.model
        unleased = m.locked_until.is_(None) | (m.locked_until < now)
        due = (
            select(m.id)
            .where(m.state.in_(self.held_states), self.due <= now, unleased, *self.scope, *where)
            .order_by(self.due, m.id)
            .limit(limit)
            .with_for_update(skip_locked=True, of=m)
            .scalar_subquery()
        )
        values: dict[str, Any] = {
            "locked_until": now + timedelta(seconds=lease_s),
            "attempts": m.attempts + 1,
        }
        if self.leased_state:
            values["state"] = self.leased_state
        rows = db_session.execute(
            update(m)
            .where(m.id.in_(due), unleased)
            .values(**values)
            .returning(m.id, m.attempts)
            .execution_options(synchronize_session=False)
        ).all()
        leases = sorted((Lease(int(i), int(a)) for i, a in rows), key=lambda lease: lease.id)
        if max_attempts is None:
            return leases
        spent = [lease for lease in leases if lease.attempts > max_attempts]
        for lease in spent:
            self._give_up(db_session, lease, now)
        return [lease for lease in leases if lease.attempts <= max_attempts]

    def claimed(self, db_session: Session, leases: list[Lease]) -> list[Any]:
        """The rows just leased, loaded afresh (the claim updated them in the database), in id order."""
        m = self.model
        query = select(m).where(m.id.in_([lease.id for lease in leases])).order_by(m.id)
        return list(db_session.scalars(query.execution_options(populate_existing=True)).all())

    def _give_up(self, db_session: Session, lease: Lease, now: datetime) -> None:
        m = self.model
        db_session.execute(
            update(m)
            .where(*self._fenced(lease))
            .values(
                state=FAILED,
                locked_until=None,
                last_error=func.coalesce(m.last_error, GAVE_UP),
                **self._ended(now),
            )
            .execution_options(synchronize_session=False)
        )

    def _ended(self, now: datetime) -> dict[str, datetime]:
        return {self.ended_at: now} if self.ended_at else {}

    def renew(
        self, db_session: Session, leases: list[Lease], *, lease_s: float, now: datetime | None = None
    ) -> list[Lease]:
        """Extend the leases still held; returns them (a row finished or taken over is left out)."""
        until = (now or utcnow()) + timedelta(seconds=lease_s)
        held: list[Lease] = []
        for lease in leases:
            result = db_session.execute(
                update(self.model)
                .where(*self._leased(lease))
                .values(locked_until=until)
                .execution_options(synchronize_session=False)
            )
            if rowcount(result):
                held.append(lease)
        return held

    def complete(
        self,
        db_session: Session,
        lease: Lease,
        *,
        values: dict[str, Any] | None = None,
        where: tuple[ColumnElement[bool], ...] = (),
        now: datetime | None = None,
    ) -> bool:
        """Mark the row done if this claim still holds it (and ``where`` holds); False otherwise."""
        done = {
            "state": self.done_state,
            "locked_until": None,
            "last_error": None,
            **self._ended(now or utcnow()),
            **(values or {}),
        }
        result = db_session.execute(
            update(self.model)
            .where(*self._fenced(lease), *where)
            .values(**done)
            .execution_options(synchronize_session=False)
        )
        return bool(rowcount(result))

    def fail(
        self,
        db_session: Session,
        lease: Lease,
        *,
        error: str,
        retry: bool = True,
        retry_after_s: float | None = None,
        max_attempts: int | None = None,
        retry_until: datetime | None = None,
        now: datetime | None = None,
        values: dict[str, Any] | None = None,
    ) -> tuple[str, datetime] | None:
        """Record a failed attempt; returns the state left and when it is next due, or None if not held.

        A budget by time (``retry_until``) brings the next attempt forward to its end at the latest, so
        the last try comes when it runs out rather than a backoff past it."""
        now = now or utcnow()
        budget_left = max_attempts is None or lease.attempts < max_attempts
        if retry_until is not None:
            budget_left = budget_left and now < retry_until
        state = self.retry_state if retry and budget_left else FAILED
        delay = backoff_delay(lease.attempts) if retry_after_s is None else retry_after_s
        due_at = now + timedelta(seconds=delay)
        if retry_until is not None:
            due_at = max(now, min(due_at, retry_until))
        result = db_session.execute(
            update(self.model)
            .where(*self._fenced(lease))
            .values(
                {
                    "state": state,
                    "last_error": error[: self.max_error_chars],
                    "locked_until": None,
                    self.due.key: due_at,
                    **(self._ended(now) if state == FAILED else {}),
                    **(values or {}),
                }
            )
            .execution_options(synchronize_session=False)
        )
        return (state, due_at) if rowcount(result) else None

    def release(self, db_session: Session, lease: Lease) -> None:
        """Give the row back unfinished (the attempt stays counted: tokens only grow). A row whose
        outcome was recorded meanwhile is left as it is."""
        values: dict[str, Any] = {"locked_until": None}
        if self.leased_state:
            values["state"] = self.open_states[0]
        db_session.execute(
            update(self.model)
            .where(*self._leased(lease))
            .values(**values)
            .execution_options(synchronize_session=False)
        )

    def backlog(self, db_session: Session, *, now: datetime | None = None) -> Backlog:
        now = now or utcnow()
        m = self.model
        owed = (m.state.in_(self.held_states), *self.scope)
        depth = db_session.scalar(select(func.count()).where(*owed))
        oldest = db_session.scalar(select(m.created_at).where(*owed).order_by(m.created_at).limit(1))
        leased = db_session.scalar(
            select(func.count()).where(*owed, m.locked_until.is_not(None), m.locked_until >= now)
        )
        age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
        return Backlog(depth=int(depth or 0), oldest_s=age, leased=int(leased or 0))
