"""The delivery outbox: messages owed to chat channels, sent once each, in order per incident thread.

``owe`` writes one row per matching channel in the caller's transaction, so a committed event always
has its messages queued, whatever happens to the process or the receiver next.

Life of a row::

    pending --claim (lease)--> sent (ref kept: a Slack ts later posts thread under)
       ^                  \\--> failing (last_error, next_attempt_at) --due again--+
       |                   \\-> failed (a 4xx, or too many attempts; retry makes it pending)
       +-----------------------------------------------------------------------+

Guarantees, and how:
- **Two workers never send the same row.** A claim is one ``UPDATE ... RETURNING`` setting a lease
  (``locked_until``) on rows that are due and unleased; on PostgreSQL its subquery takes them
  ``FOR UPDATE SKIP LOCKED``, on SQLite the statement runs under the single write lock. The lease
  outlives any attempt (it is longer than the send timeout); a crashed worker's lease expires and the
  row is claimed again after a restart.
- **In order per thread.** A row is due only when no earlier row of the same incident and channel is
  still open, so the first message (whose id later ones thread under) goes first.
- **The send happens once per claim; the outcome is recorded after it.** The one window left is a
  crash after the receiver accepted and before ``complete`` committed; the generic webhook carries the
  row id (``X-RecallOps-Delivery``) so a receiver can drop that repeat.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, aliased

from incidents.database import rowcount
from incidents.delivery.models import Delivery
from incidents.delivery.routing import enabled_routes
from incidents.incident.models import Incident
from incidents.resolution.outbox import backoff_delay
from incidents.timeutil import utcnow

OPEN_STATES = ("pending", "failing")
STATES = ("pending", "failing", "sent", "failed")
MAX_ERROR_CHARS = 1000
MAX_RETRY_AFTER_S = 3600.0


@dataclass(frozen=True)
class Claim:
    """A row this worker may send until its lease ends; complete or fail it by id."""

    id: int
    incident_id: int | None
    channel: str
    event: str
    payload: dict[str, Any]
    attempts: int


def owe(*, db_session: Session, incident: Incident, event: str, data: dict[str, Any] | None = None) -> int:
    """Queue ``event`` to every enabled channel whose rules match the incident; returns how many."""
    routes = [
        route
        for route in enabled_routes(db_session=db_session)
        if route.matches(event=event, service=incident.service, severity=incident.severity)
    ]
    now = utcnow()
    for route in routes:
        db_session.add(
            Delivery(
                incident_id=incident.id,
                channel=route.name,
                event=event,
                payload=dict(data or {}),
                state="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )
    db_session.flush()
    return len(routes)


def owe_one(*, db_session: Session, channel: str, event: str, data: dict[str, Any]) -> Delivery:
    """Queue one message to one channel, outside any incident (``notify test``)."""
    now = utcnow()
    row = Delivery(
        incident_id=None,
        channel=channel,
        event=event,
        payload=data,
        state="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
    )
    db_session.add(row)
    db_session.flush()
    return row


def claim_due(
    *,
    db_session: Session,
    limit: int,
    lease_s: float,
    now: datetime | None = None,
    only_ids: list[int] | None = None,
) -> list[Claim]:
    """Lease up to ``limit`` due rows, oldest first, each the earliest open one of its thread. Commit next."""
    now = now or utcnow()
    earlier = aliased(Delivery)
    blocked = (
        select(earlier.id)
        .where(
            earlier.incident_id == Delivery.incident_id,
            earlier.channel == Delivery.channel,
            earlier.id < Delivery.id,
            earlier.state.in_(OPEN_STATES),
        )
        .exists()
    )
    due = select(Delivery.id).where(
        Delivery.state.in_(OPEN_STATES),
        Delivery.next_attempt_at <= now,
        (Delivery.locked_until.is_(None)) | (Delivery.locked_until < now),
        (Delivery.incident_id.is_(None)) | ~blocked,
    )
    if only_ids is not None:
        due = due.where(Delivery.id.in_(only_ids))
    due_ids = (
        due.order_by(Delivery.next_attempt_at, Delivery.id)
        .limit(limit)
        .with_for_update(skip_locked=True, of=Delivery)
        .scalar_subquery()
    )
    rows = db_session.execute(
        update(Delivery)
        .where(Delivery.id.in_(due_ids))
        .values(locked_until=now + timedelta(seconds=lease_s))
        .returning(
            Delivery.id,
            Delivery.incident_id,
            Delivery.channel,
            Delivery.event,
            Delivery.payload,
            Delivery.attempts,
        )
        .execution_options(synchronize_session=False)
    ).all()
    return sorted((Claim(*row) for row in rows), key=lambda claim: claim.id)


def thread_ref(*, db_session: Session, incident_id: int | None, channel: str) -> str | None:
    """The receiver's id of the first message about this incident on this channel, if it gave one."""
    if incident_id is None:
        return None
    return db_session.scalar(
        select(Delivery.ref)
        .where(
            Delivery.incident_id == incident_id,
            Delivery.channel == channel,
            Delivery.state == "sent",
            Delivery.ref.is_not(None),
        )
        .order_by(Delivery.id)
        .limit(1)
    )


def complete(*, db_session: Session, claim: Claim, ref: str | None, now: datetime | None = None) -> None:
    db_session.execute(
        update(Delivery)
        .where(Delivery.id == claim.id)
        .values(
            state="sent",
            sent_at=now or utcnow(),
            ref=ref,
            attempts=Delivery.attempts + 1,
            locked_until=None,
            last_error=None,
        )
        .execution_options(synchronize_session=False)
    )


def fail(
    *,
    db_session: Session,
    claim: Claim,
    error: str,
    retry: bool,
    retry_after_s: float | None = None,
    max_attempts: int,
    now: datetime | None = None,
) -> str:
    """Record a failed attempt: failing with a next attempt (backoff, or ``Retry-After``), or failed.

    Returns the state the row is left in.
    """
    now = now or utcnow()
    attempts = claim.attempts + 1
    state = "failing" if retry and attempts < max_attempts else "failed"
    delay = backoff_delay(attempts)
    if retry_after_s is not None:
        delay = min(max(retry_after_s, 0.0), MAX_RETRY_AFTER_S)
    db_session.execute(
        update(Delivery)
        .where(Delivery.id == claim.id, Delivery.state != "sent")
        .values(
            state=state,
            attempts=attempts,
            last_error=error[:MAX_ERROR_CHARS],
            next_attempt_at=now + timedelta(seconds=delay),
            locked_until=None,
        )
        .execution_options(synchronize_session=False)
    )
    return state


def retry(*, db_session: Session, channel: str | None = None, now: datetime | None = None) -> int:
    """Make failed and failing rows due now, with a fresh attempt budget. Returns how many."""
    query = update(Delivery).where(Delivery.state.in_(("failed", "failing")))
    if channel is not None:
        query = query.where(Delivery.channel == channel)
    changes = query.values(state="pending", attempts=0, next_attempt_at=now or utcnow(), locked_until=None)
    return rowcount(db_session.execute(changes.execution_options(synchronize_session=False)))


@dataclass(frozen=True)
class ChannelStatus:
    """One channel's outbox at a glance: counts by state, the last success and the last error."""

    channel: str
    counts: dict[str, int]
    last_sent_at: datetime | None
    last_error: str | None


def channel_status(*, db_session: Session) -> list[ChannelStatus]:
    counts: dict[str, Counter[str]] = {}
    for channel, state, n in db_session.execute(
        select(Delivery.channel, Delivery.state, func.count()).group_by(Delivery.channel, Delivery.state)
    ):
        counts.setdefault(channel, Counter())[state] = n
    result: list[ChannelStatus] = []
    for channel in sorted(counts):
        last_sent = db_session.scalar(
            select(func.max(Delivery.sent_at)).where(Delivery.channel == channel, Delivery.state == "sent")
        )
        last_error = db_session.scalar(
            select(Delivery.last_error)
            .where(Delivery.channel == channel, Delivery.state.in_(("failing", "failed")))
            .order_by(Delivery.id.desc())
            .limit(1)
        )
        result.append(
            ChannelStatus(
                channel=channel,
                counts={state: int(counts[channel].get(state, 0)) for state in STATES},
                last_sent_at=last_sent,
                last_error=last_error,
            )
        )
    return result


def depth(*, db_session: Session) -> dict[str, int]:
    """Rows not yet sent, by state (pending, failing): the outbox's depth."""
    rows = db_session.execute(
        select(Delivery.state, func.count()).where(Delivery.state.in_(OPEN_STATES)).group_by(Delivery.state)
    )
    found = {state: int(n) for state, n in rows}
    return {state: found.get(state, 0) for state in OPEN_STATES}


def incident_deliveries(*, db_session: Session, incident_id: int) -> list[Delivery]:
    """Every message owed about the incident, oldest first: what its page lists per channel."""
    return list(
        db_session.scalars(select(Delivery).where(Delivery.incident_id == incident_id).order_by(Delivery.id))
    )
