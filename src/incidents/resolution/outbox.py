"""The memory outbox: writes owed to the memory bank, delivered at least once, never by two workers at once.

A row is written in the same transaction as the resolution it describes, so a committed resolution
always has its memory write queued, whatever happens to the process or the memory layer next.

Life of a row::

    pending --claim (lease)--> delivered --> synced
       ^                  \\--> failed  --> failing (last_error, next_attempt_at = now + backoff)
       |                                      |
       +------------- due again --------------+

Guarantees, and how:
- **One undelivered row per document.** A newer edit rewrites the open row's payload and bumps its
  ``generation`` (a partial unique index enforces it), so two versions of a record never race.
- **Two workers never deliver the same row.** A claim is one ``UPDATE ... RETURNING`` that sets a lease
  (``locked_until``); on PostgreSQL its subquery takes the rows ``FOR UPDATE SKIP LOCKED``, so concurrent
  claimers skip each other's rows instead of waiting; on SQLite the statement runs under the database's
  single write lock, so claims are serialized. The lease is short and the worker renews it while it
  delivers (``renew`` matches the ``locked_until`` it set, so a worker whose lease was taken over
  cannot extend the new holder's); a killed worker stops renewing and its rows are due again within
  one lease length.
- **A rewritten row is not marked synced by a stale delivery.** Completion matches the claimed
  ``generation``; if the payload changed meanwhile, the row stays pending and is delivered again.
- **Backoff** is exponential with full jitter, computed by tenacity's wait strategy from the attempt
  count, capped, and never gives up: memory that comes back after an hour still gets every record.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from tenacity import RetryCallState, Retrying, wait_random_exponential

from incidents.database import rowcount
from incidents.incident.models import Incident
from incidents.resolution.models import OutboxEntry
from incidents.timeutil import utcnow

OutboxState = Literal["pending", "synced", "failing"]
OPEN_STATES = ("pending", "failing")
BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 600.0
MAX_ERROR_CHARS = 2000

_BACKOFF = wait_random_exponential(multiplier=1, min=BACKOFF_MIN_S, max=BACKOFF_MAX_S)


@dataclass(frozen=True)
class Claim:
    """A row this worker may deliver until ``locked_until``; complete or fail it by id and generation."""

    id: int
    generation: int
    incident_id: int | None
    document_id: str
    kind: str
    payload: dict[str, Any]
    attempts: int
    locked_until: datetime


@dataclass(frozen=True)
class QueueStats:
    pending: int
    failing: int
    oldest_unsynced_at: datetime | None

    @property
    def depth(self) -> int:
        return self.pending + self.failing


def backoff_delay(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th consecutive failure: uniform in [1, min(600, 2**(n-1))]."""
    state = RetryCallState(retry_object=Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = max(1, attempts)
    return float(_BACKOFF(state))


def enqueue(
    *, db_session: Session, incident_id: int | None, document_id: str, kind: str, payload: dict[str, Any]
) -> OutboxEntry:
    """Owe memory this document's current content: rewrite the open row if there is one, else add one."""
    entry = db_session.scalars(
        select(OutboxEntry).where(OutboxEntry.document_id == document_id, OutboxEntry.state != "synced")
    ).one_or_none()
    now = utcnow()
    if entry is None:
        entry = OutboxEntry(
            incident_id=incident_id,
            document_id=document_id,
            kind=kind,
            payload=payload,
            generation=1,
            state="pending",
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        db_session.add(entry)
    else:
        entry.payload = payload
        entry.generation += 1
        entry.state = "pending"
        entry.attempts = 0
        entry.next_attempt_at = now
    db_session.flush()
    return entry


def claim_due(*, db_session: Session, limit: int, lease_s: float, now: datetime | None = None) -> list[Claim]:
    """Lease up to ``limit`` due rows to the caller, oldest due first. Commit right after."""
    now = now or utcnow()
    due = (
        select(OutboxEntry.id)
        .where(
            OutboxEntry.state.in_(OPEN_STATES),
            OutboxEntry.next_attempt_at <= now,
            (OutboxEntry.locked_until.is_(None)) | (OutboxEntry.locked_until < now),
        )
        .order_by(OutboxEntry.next_attempt_at, OutboxEntry.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    rows = db_session.execute(
        update(OutboxEntry)
        .where(OutboxEntry.id.in_(due))
        .values(locked_until=now + timedelta(seconds=lease_s))
        .returning(
            OutboxEntry.id,
            OutboxEntry.generation,
            OutboxEntry.incident_id,
            OutboxEntry.document_id,
            OutboxEntry.kind,
            OutboxEntry.payload,
            OutboxEntry.attempts,
            OutboxEntry.locked_until,
        )
        .execution_options(synchronize_session=False)
    ).all()
    claims = [Claim(*row) for row in rows]
    return sorted(claims, key=lambda claim: claim.id)


def renew(
    *,
    db_session: Session,
    ids: list[int],
    locked_until: datetime,
    lease_s: float,
    now: datetime | None = None,
) -> datetime:
    """Extend the lease on those of ``ids`` still held under ``locked_until``; returns the new expiry.

    Rows already completed or failed have no lease any more, and a row another worker took over has
    a different one: neither matches, so only what this worker still holds is extended.
    """
    renewed = (now or utcnow()) + timedelta(seconds=lease_s)
    db_session.execute(
        update(OutboxEntry)
        .where(OutboxEntry.id.in_(ids), OutboxEntry.locked_until == locked_until)
        .values(locked_until=renewed)
        .execution_options(synchronize_session=False)
    )
    return renewed


def complete(*, db_session: Session, claim: Claim, now: datetime | None = None) -> bool:
    """Mark the claimed generation synced; False (and the lease released) if it was rewritten meanwhile,
    or already synced by a worker that took the row over."""
    now = now or utcnow()
    synced = rowcount(
        db_session.execute(
            update(OutboxEntry)
            .where(
                OutboxEntry.id == claim.id,
                OutboxEntry.generation == claim.generation,
                OutboxEntry.state != "synced",  # a worker that took the row over may have finished it
            )
            .values(state="synced", synced_at=now, locked_until=None, last_error=None)
            .execution_options(synchronize_session=False)
        )
    )
    if not synced:
        release(db_session=db_session, entry_id=claim.id)
    return bool(synced)


def fail(*, db_session: Session, claim: Claim, error: str, now: datetime | None = None) -> datetime:
    """Record a failed attempt: state failing, the error kept, the next attempt after a jittered backoff."""
    now = now or utcnow()
    attempts = claim.attempts + 1
    next_attempt_at = now + timedelta(seconds=backoff_delay(attempts))
    db_session.execute(
        update(OutboxEntry)
        .where(OutboxEntry.id == claim.id, OutboxEntry.state != "synced")
        .values(
            state="failing",
            attempts=OutboxEntry.attempts + 1,
            last_error=error[:MAX_ERROR_CHARS],
            next_attempt_at=next_attempt_at,
            locked_until=None,
        )
        .execution_options(synchronize_session=False)
    )
    return next_attempt_at


def release(*, db_session: Session, entry_id: int) -> None:
    db_session.execute(
        update(OutboxEntry)
        .where(OutboxEntry.id == entry_id)
        .values(locked_until=None)
        .execution_options(synchronize_session=False)
    )


def retry_failed(*, db_session: Session, now: datetime | None = None) -> int:
    """Make every failing row due now (an operator saw memory come back). Returns how many."""
    now = now or utcnow()
    return rowcount(
        db_session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.state == "failing")
            .values(next_attempt_at=now)
            .execution_options(synchronize_session=False)
        )
    )


def queue_stats(*, db_session: Session) -> QueueStats:
    counts = dict(
        db_session.execute(
            select(OutboxEntry.state, func.count())
            .where(OutboxEntry.state.in_(OPEN_STATES))
            .group_by(OutboxEntry.state)
        ).all()
    )
    oldest = db_session.scalar(
        select(OutboxEntry.created_at)
        .where(OutboxEntry.state.in_(OPEN_STATES))
        .order_by(OutboxEntry.created_at)
        .limit(1)
    )
    return QueueStats(
        pending=int(counts.get("pending", 0)),
        failing=int(counts.get("failing", 0)),
        oldest_unsynced_at=oldest,
    )


def newest_sync(*, db_session: Session, service: str | None = None) -> datetime | None:
    """When memory last accepted a write from this deployment, for one service or any."""
    query = select(OutboxEntry.synced_at).where(OutboxEntry.state == "synced")
    if service is not None:
        query = query.join(Incident, Incident.id == OutboxEntry.incident_id).where(
            Incident.service == service
        )
    return db_session.scalar(query.order_by(OutboxEntry.synced_at.desc()).limit(1))
