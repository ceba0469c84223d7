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
- **Two workers never deliver the same row**, leases are short and renewed, and a claim's attempt
  number fences it: the one leased queue (``incidents.queue``) does all of it, for this table too.
- **A rewritten row is not marked synced by a stale delivery.** Completion also matches the claimed
  ``generation``; if the payload changed meanwhile, the row stays pending and is delivered again.
- **Backoff** is the queue's one rule, with no attempt budget: memory that comes back after an hour
  still gets every record.
"""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import distinct, func, select, update
from sqlalchemy.orm import Session

from incidents.database import rowcount
from incidents.incident.models import Incident
from incidents.queue.table import OUTBOX_OPEN_STATES, Claimed, Queue
from incidents.resolution.models import OutboxEntry
from incidents.timeutil import utcnow

OutboxState = Literal["pending", "synced", "failing"]
OPEN_STATES = OUTBOX_OPEN_STATES
MAX_ERROR_CHARS = 2000

MEMORY_WRITES = Queue.outbox(OutboxEntry, done_state="synced", max_error_chars=MAX_ERROR_CHARS)


@dataclass(frozen=True)
class Claim(Claimed):
    """A row this worker may deliver while its lease holds; complete or fail it by lease and generation."""

    generation: int
    incident_id: int | None
    document_id: str
    kind: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class QueueStats:
    pending: int
    failing: int
    oldest_unsynced_at: datetime | None

    @property
    def depth(self) -> int:
        return self.pending + self.failing


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
    else:  # the attempt count stays: it is the lease's fencing token while a delivery is in flight
        entry.payload = payload
        entry.generation += 1
        entry.state = "pending"
        entry.next_attempt_at = now
    db_session.flush()
    return entry


def claim_due(*, db_session: Session, limit: int, lease_s: float, now: datetime | None = None) -> list[Claim]:
    """Lease up to ``limit`` due rows to the caller, oldest due first. Commit right after."""
    leases = MEMORY_WRITES.claim(db_session, limit=limit, lease_s=lease_s, now=now)
    return [Claim.of(row) for row in MEMORY_WRITES.claimed(db_session, leases)]


def complete(*, db_session: Session, claim: Claim, now: datetime | None = None) -> bool:
    """Mark the claimed generation synced; False (and the lease released) if it was rewritten meanwhile,
    or the row was taken over by another worker."""
    now = now or utcnow()
    synced = MEMORY_WRITES.complete(
        db_session,
        claim.lease,
        values={"synced_at": now},
        where=(OutboxEntry.generation == claim.generation,),
        now=now,
    )
    if not synced:
        MEMORY_WRITES.release(db_session, claim.lease)
    return synced


def fail(*, db_session: Session, claim: Claim, error: str, now: datetime | None = None) -> datetime:
    """Record a failed attempt: state failing, the error kept, the next attempt after the backoff."""
    now = now or utcnow()
    outcome = MEMORY_WRITES.fail(db_session, claim.lease, error=error, now=now)
    return outcome[1] if outcome else now


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


def unsynced(*, db_session: Session, document_ids: Collection[str]) -> int:
    """How many of these documents memory does not hold yet, whichever worker is delivering them."""
    if not document_ids:
        return 0
    count = db_session.scalar(
        select(func.count(distinct(OutboxEntry.document_id))).where(
            OutboxEntry.document_id.in_(document_ids), OutboxEntry.state.in_(OPEN_STATES)
        )
    )
    return int(count or 0)


def newest_sync(*, db_session: Session, service: str | None = None) -> datetime | None:
    """When memory last accepted a write from this deployment, for one service or any."""
    query = select(OutboxEntry.synced_at).where(OutboxEntry.state == "synced")
    if service is not None:
        query = query.join(Incident, Incident.id == OutboxEntry.incident_id).where(
            Incident.service == service
        )
    return db_session.scalar(query.order_by(OutboxEntry.synced_at.desc()).limit(1))
