"""The delivery outbox: messages owed to chat channels, sent once each, in order per incident thread.

``owe`` writes one row per matching channel in the caller's transaction, so a committed event always
has its messages queued, whatever happens to the process or the receiver next.

Life of a row::

    pending --claim (lease)--> sent (ref kept: a Slack ts later posts thread under)
       ^                  \\--> failing (last_error, next_attempt_at) --due again--+
       |                   \\-> failed (a 4xx, its retry window spent, or a test message's one try;
       |                                retry makes it pending, but for a test message)
       +-----------------------------------------------------------------------+

A message is retried for a window of time from when it was queued (``retry_for_s``), not a number
of tries: a receiver down for a few minutes loses nothing. ``MAX_CLAIMS`` only stops a message whose
sends keep killing the worker before it can record an outcome.

Guarantees, and how:
- **Two workers never send the same row**, a claim's attempt number fences it and the attempt budget
  bounds it: the one leased queue (``incidents.queue``) does all of it, for this table too. The lease
  is renewed while the send runs, and every send has a total deadline, so a crashed worker's rows are
  due again within one lease.
- **In order per thread.** A row is due only when no earlier row of the same incident and channel is
  still open, so the first message (whose id later ones thread under) goes first.
- **A Retry-After holds the channel.** A receiver's rate limit is the channel's, not one message's: the
  wait it asks for is kept on the channel (``held_until``), and no row of it is claimed before then,
  on any replica, queued before the answer or after.
- **The send happens once per claim; the outcome is recorded after it.** The one window left is a
  crash after the receiver accepted and before ``complete`` committed; the generic webhook carries the
  row id (``X-RecallOps-Delivery``) so a receiver can drop that repeat.
"""

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session, aliased

from incidents.database import rowcount
from incidents.delivery.holds import channel_holds, last_error
from incidents.delivery.models import Delivery, DeliveryChannel
from incidents.delivery.routing import TEST, routes_for
from incidents.incident.models import Incident
from incidents.queue.table import OUTBOX_OPEN_STATES, Claimed, Queue
from incidents.timeutil import utcnow

OPEN_STATES = OUTBOX_OPEN_STATES
STATES = ("pending", "failing", "sent", "failed")
MAX_ERROR_CHARS = 1000
MAX_CLAIMS = 100

MESSAGES = Queue.outbox(Delivery, done_state="sent", max_error_chars=MAX_ERROR_CHARS)


@dataclass(frozen=True)
class Claim(Claimed):
    """A row this worker may send while its lease holds; complete or fail it by its lease."""

    incident_id: int | None
    channel: str
    event: str
    payload: dict[str, Any]
    created_at: datetime  # when it was queued (again, by ``retry``): its retry window starts here


def owe(*, db_session: Session, incident: Incident, event: str, data: dict[str, Any] | None = None) -> int:
    """Queue ``event`` to every enabled channel whose rules match the incident; returns how many."""
    routes = routes_for(
        db_session=db_session, event=event, service=incident.service, severity=incident.severity
    )
    return _queue(db_session, incident.id, [route.name for route in routes], event, data or {})


def owe_newly_reached(
    *,
    db_session: Session,
    incident_id: int,
    service: str,
    was: str,
    severity: str,
    event: str,
    data: dict[str, Any],
) -> int:
    """Queue ``event`` to the channels an incident's severity, raised from ``was`` to ``severity``, now
    matches and did not before: a channel that wants only worse incidents has not heard of this one."""
    before = {
        route.name for route in routes_for(db_session=db_session, event=event, service=service, severity=was)
    }
    reached = routes_for(db_session=db_session, event=event, service=service, severity=severity)
    return _queue(db_session, incident_id, [r.name for r in reached if r.name not in before], event, data)


def _queue(
    db_session: Session, incident_id: int, channels: list[str], event: str, data: dict[str, Any]
) -> int:
    now = utcnow()
    for channel in channels:
        db_session.add(
            Delivery(
                incident_id=incident_id,
                channel=channel,
                event=event,
                payload=dict(data),
                state="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )
    db_session.flush()
    return len(channels)


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
    max_attempts: int | None = MAX_CLAIMS,
    now: datetime | None = None,
    only_ids: list[int] | None = None,
    skip_channels: Collection[str] = (),
) -> list[Claim]:
    """Lease up to ``limit`` due rows, oldest first, each the earliest open one of its thread. Commit next.

    ``skip_channels`` are left alone (the caller has as many of their sends in flight as it allows)."""
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
    now = now or utcnow()
    held = (
        select(DeliveryChannel.name)
        .where(DeliveryChannel.name == Delivery.channel, DeliveryChannel.held_until > now)
        .exists()
    )
    where: list[ColumnElement[bool]] = [(Delivery.incident_id.is_(None)) | ~blocked, ~held]
    if only_ids is not None:
        where.append(Delivery.id.in_(only_ids))
    if skip_channels:
        where.append(Delivery.channel.not_in(list(skip_channels)))
    leases = MESSAGES.claim(
        db_session, limit=limit, lease_s=lease_s, max_attempts=max_attempts, where=tuple(where), now=now
    )
    return [Claim.of(row) for row in MESSAGES.claimed(db_session, leases)]


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


def complete(*, db_session: Session, claim: Claim, ref: str | None, now: datetime | None = None) -> bool:
    now = now or utcnow()
    return MESSAGES.complete(db_session, claim.lease, values={"sent_at": now, "ref": ref}, now=now)


def fail(
    *,
    db_session: Session,
    claim: Claim,
    error: str,
    retry: bool,
    retry_after_s: float | None = None,
    retry_for_s: float,
    now: datetime | None = None,
) -> str:
    """Record a failed attempt: failing with a next attempt (backoff, or ``Retry-After``), or failed
    once ``retry_for_s`` seconds have passed since the message was queued (the last try comes then).
    A ``Retry-After`` holds the whole channel as long. A test message is tried once: whoever sent it is
    waiting for this answer, and a copy arriving later would say nothing about the channel then.

    Returns the state the row is left in (``lost`` if another worker holds it now).
    """
    now = now or utcnow()
    outcome = MESSAGES.fail(
        db_session,
        claim.lease,
        error=error,
        retry=retry and claim.event != TEST,
        retry_after_s=retry_after_s,
        retry_until=claim.created_at + timedelta(seconds=retry_for_s),
        now=now,
        values={"last_error_at": now},
    )
    if outcome is None:
        return "lost"
    if retry_after_s is not None:
        _hold(db_session, claim.channel, until=now + timedelta(seconds=retry_after_s))
    return outcome[0]


def _hold(db_session: Session, channel: str, *, until: datetime) -> None:
    """Send nothing to the channel before ``until`` (a later hold than one already set wins)."""
    db_session.execute(
        update(DeliveryChannel)
        .where(
            DeliveryChannel.name == channel,
            DeliveryChannel.held_until.is_(None) | (DeliveryChannel.held_until < until),
        )
        .values(held_until=until)
        .execution_options(synchronize_session=False)
    )


def retry(*, db_session: Session, channel: str | None = None, now: datetime | None = None) -> int:
    """Make failed and failing rows due now, queued afresh (a new retry window). Returns how many.

    A row leased right now is left to its sender: reviving it would let a second worker send it too.
    Test messages stay as they ended (``notify test`` sends a new one).
    """
    now = now or utcnow()
    unleased = Delivery.locked_until.is_(None) | (Delivery.locked_until < now)
    revivable = (Delivery.state.in_(("failed", "failing")), Delivery.event != TEST)
    query = update(Delivery).where(*revivable, unleased)
    if channel is not None:
        query = query.where(Delivery.channel == channel)
    changes = query.values(
        state="pending", attempts=0, next_attempt_at=now, created_at=now, locked_until=None
    )
    return rowcount(db_session.execute(changes.execution_options(synchronize_session=False)))


@dataclass(frozen=True)
class ChannelStatus:
    """One channel's outbox at a glance: counts by state, the last success, the last error, and until
    when its receiver asked it to wait (``Retry-After``), while it does."""

    channel: str
    counts: dict[str, int]
    last_sent_at: datetime | None
    last_error: str | None
    last_error_at: datetime | None
    held_until: datetime | None = None


def channel_status(*, db_session: Session, now: datetime | None = None) -> list[ChannelStatus]:
    holds = channel_holds(db_session=db_session, now=now)
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
        trouble = last_error(db_session=db_session, channel=channel, states=("failing", "failed"))
        hold = holds.get(channel)
        result.append(
            ChannelStatus(
                channel=channel,
                counts={state: int(counts[channel].get(state, 0)) for state in STATES},
                last_sent_at=last_sent,
                last_error=trouble.error,
                last_error_at=trouble.at,
                held_until=hold.until if hold else None,
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
