"""Channels a receiver asked to wait (``Retry-After``): until when, and what the receiver answered.

The outbox keeps the wait on the channel (``held_until``), since the receiver's rate limit is the
channel's, not one message's; the answer that asked for it is the last error recorded for the
channel: nothing is sent to a held channel, on any replica, so no later answer replaces it before the
wait is over. A page and ``notify status`` read holds here, so both say the same thing.
"""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from incidents.delivery.models import Delivery, DeliveryChannel
from incidents.timeutil import utcnow


@dataclass(frozen=True)
class ChannelHold:
    """Nothing goes to ``channel`` before ``until``; ``reason`` is the receiver's answer (scrubbed of
    the channel's secrets, as every stored error is), at ``reason_at``, when one is on record."""

    channel: str
    until: datetime
    reason: str | None
    reason_at: datetime | None


@dataclass(frozen=True)
class LastError:
    error: str | None
    at: datetime | None


def last_error(*, db_session: Session, channel: str, states: tuple[str, ...] | None = None) -> LastError:
    """The channel's newest recorded error (of a row in one of ``states``, if given), with its time."""
    where: list[ColumnElement[bool]] = [Delivery.channel == channel, Delivery.last_error.is_not(None)]
    if states is not None:
        where.append(Delivery.state.in_(states))
    found = db_session.execute(
        select(Delivery.last_error, Delivery.last_error_at)
        .where(*where)
        .order_by(Delivery.last_error_at.desc().nulls_last(), Delivery.id.desc())
        .limit(1)
    ).first()
    return LastError(found[0], found[1]) if found else LastError(None, None)


def channel_holds(*, db_session: Session, now: datetime | None = None) -> dict[str, ChannelHold]:
    """Every channel held at ``now``, by name; a channel never held, or whose wait is over, is absent."""
    now = now or utcnow()
    holds: dict[str, ChannelHold] = {}
    for row in db_session.scalars(select(DeliveryChannel).where(DeliveryChannel.held_until > now)):
        if row.held_until is None:  # excluded by the query; the column may be null
            continue
        answer = last_error(db_session=db_session, channel=row.name)
        holds[row.name] = ChannelHold(row.name, row.held_until, reason=answer.error, reason_at=answer.at)
    return holds
