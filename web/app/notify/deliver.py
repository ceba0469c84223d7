"""Delivering the delivery outbox: claimed rows become messages, each outcome recorded after the send.

The delivery lane (``web.app.lanes``) claims rows and commits the claim before anything leaves the
process; each send has a total deadline (``web.app.notify.senders``) and holds no database
connection, and its outcome (sent with the receiver's message id, failing with a backed-off next
attempt, or failed) is committed on its own. Up to ``notify_concurrency`` sends are in flight, at
most ``notify_channel_concurrency`` of them to one channel, so a receiver that hangs holds a few
slots of this lane and nothing else. What a message says is read at send time from the incident
and the briefing version the row names (a stored version never changes), and rendered by
``web.app.notify.render``.
"""

import asyncio
import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.delivery import outbox
from incidents.delivery.outbox import Claim
from incidents.delivery.routing import INCIDENT_RESOLVED
from incidents.grades import service as grades
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from web.app.lanes import Outcomes, QueueLane
from web.app.metrics import DELIVERIES, DELIVERY_OUTBOX_DEPTH
from web.app.notify.config import redact
from web.app.notify.notifier import Notifier
from web.app.notify.render import Notice, compose
from web.app.notify.senders import SendError, send

log = logging.getLogger(__name__)

BATCH = 20


def _notice(db: Session, notifier: Notifier, claim: Claim) -> tuple[Notice, str | None]:
    incident = db.get(Incident, claim.incident_id) if claim.incident_id is not None else None
    facts = {"public_id": "", "service": "", "severity": "", "status": "", "title": ""}
    briefing = None
    link = None
    payload = claim.payload
    if incident is not None:
        facts = {
            "public_id": incident.public_id,
            "service": incident.service,
            "severity": incident.severity,
            "status": incident.status,
            "title": incident.title,
        }
        version = claim.payload.get("version")
        stored = (
            briefings.get_briefing(db_session=db, incident_id=incident.id, version=int(version))
            if version is not None
            else briefings.latest_briefing(db_session=db, incident_id=incident.id)
        )
        briefing = stored.data if stored is not None else None
        link = f"{notifier.base_url}/incidents/{incident.public_id}"
        if claim.event == INCIDENT_RESOLVED:
            # The worker grades briefings after the resolve commits: a grade stored by the time this row
            # is sent (the latest briefing version's) goes into the message; none yet means none is said.
            graded = grades.incident_grades(db_session=db, incident_id=incident.id)
            if graded:
                payload = {**payload, "grade": graded[-1].score, "graded_version": graded[-1].version}
    notice = compose(event=claim.event, incident=facts, payload=payload, briefing=briefing, link=link)
    thread = outbox.thread_ref(db_session=db, incident_id=claim.incident_id, channel=claim.channel)
    return notice, thread


async def deliver_claim(
    sessions: sessionmaker[Session], notifier: Notifier, claim: Claim, *, timeout_s: float | None = None
) -> str:
    """Send one claimed row and record what happened; returns the row's new state."""
    channel = notifier.channels.get(claim.channel)
    retry_for_s = notifier.settings.notify_retry_window_s
    if channel is None:
        # Another replica may have it: during a rolling change of the channels some have it and some
        # not yet. Retried with backoff, so a replica that has it sends it; failed once the budget is spent.
        error = f"channel {claim.channel!r} is not configured on this replica"
        return _record_failure(sessions, claim, error, True, None, retry_for_s)
    notice, thread = await asyncio.to_thread(_read_notice, sessions, notifier, claim)
    timeout = notifier.settings.notify_timeout_s if timeout_s is None else timeout_s
    try:
        ref = await send(channel, notice, delivery_id=claim.id, thread=thread, timeout_s=timeout)
    except SendError as exc:
        failure = SendError(redact(str(exc), channel.secrets()), exc.retry, exc.retry_after_s)
    except Exception as exc:  # a sender that broke on an answer: the row says so and is retried
        log.exception("send failed unexpectedly", extra={"delivery_id": claim.id, "channel": claim.channel})
        failure = SendError(f"unexpected {type(exc).__name__} while sending", retry=True)
    else:
        await asyncio.to_thread(_record_success, sessions, claim, ref)
        return "sent"
    return await asyncio.to_thread(
        _record_failure, sessions, claim, failure.message, failure.retry, failure.retry_after_s, retry_for_s
    )


def _read_notice(
    sessions: sessionmaker[Session], notifier: Notifier, claim: Claim
) -> tuple[Notice, str | None]:
    with sessions() as db:
        return _notice(db, notifier, claim)


def _record_success(sessions: sessionmaker[Session], claim: Claim, ref: str | None) -> None:
    with transaction(sessions) as db, serialized_writes(db):
        outbox.complete(db_session=db, claim=claim, ref=ref)
        db.commit()
    DELIVERIES.labels(channel=claim.channel, outcome="sent").inc()


def _record_failure(
    sessions: sessionmaker[Session],
    claim: Claim,
    error: str,
    retry: bool,
    retry_after_s: float | None,
    retry_for_s: float,
) -> str:
    with transaction(sessions) as db, serialized_writes(db):
        state = outbox.fail(
            db_session=db,
            claim=claim,
            error=error,
            retry=retry,
            retry_after_s=retry_after_s,
            retry_for_s=retry_for_s,
        )
        db.commit()
    DELIVERIES.labels(channel=claim.channel, outcome=state).inc()
    log.warning(
        "delivery failed",
        extra={"delivery_id": claim.id, "channel": claim.channel, "error": error, "state": state},
    )
    return state


@dataclass
class ChannelSlots:
    """Sends in flight per channel, so one channel's stuck receiver cannot take every slot of the lane."""

    per_channel: int
    busy: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def full(self) -> list[str]:
        with self.lock:
            return [channel for channel, n in self.busy.items() if n >= self.per_channel]

    def take(self, channel: str) -> None:
        with self.lock:
            self.busy[channel] += 1

    def give(self, channel: str) -> None:
        with self.lock:
            self.busy[channel] -= 1


def delivery_lane(
    sessions: sessionmaker[Session],
    notifier: Notifier,
    *,
    poll_s: float,
    only_ids: list[int] | None = None,
    timeout_s: float | None = None,
) -> QueueLane[Claim]:
    """The delivery outbox's lane (``only_ids`` and ``timeout_s`` narrow it for one ``notify test``)."""
    settings = notifier.settings
    slots = ChannelSlots(settings.notify_channel_concurrency)

    def claim(db: Session, limit: int) -> list[Claim]:
        claims: list[Claim] = []
        while len(claims) < limit:
            got = outbox.claim_due(
                db_session=db,
                limit=1,
                lease_s=notifier.lease_s,
                only_ids=only_ids,
                skip_channels=slots.full(),
            )
            if not got:
                break
            slots.take(got[0].channel)
            claims += got
        return claims

    async def run(claim: Claim) -> str:
        try:
            return await deliver_claim(sessions, notifier, claim, timeout_s=timeout_s)
        finally:
            slots.give(claim.channel)

    return QueueLane(
        "delivery",
        queue=outbox.MESSAGES,
        sessions=sessions,
        claim=claim,
        run=run,
        lease_of=lambda claim: claim.lease,
        lease_s=notifier.lease_s,
        concurrency=settings.notify_concurrency,
        poll_s=poll_s,
    )


async def deliver_due(
    sessions: sessionmaker[Session],
    notifier: Notifier,
    *,
    limit: int = BATCH,
    only_ids: list[int] | None = None,
    timeout_s: float | None = None,
) -> Outcomes:
    """Claim what is due now and send it; counts how the claimed rows ended (sent, failing, failed)."""
    lane = delivery_lane(sessions, notifier, poll_s=1.0, only_ids=only_ids, timeout_s=timeout_s)
    return await lane.drain_once(limit)


def track_delivery_outbox(sessions: sessionmaker[Session]) -> None:
    """Messages not yet sent, by state, read at scrape time: exact across every replica."""

    def depth(state: str) -> Callable[[], float]:
        def value() -> float:
            try:
                with sessions() as db:
                    return float(outbox.depth(db_session=db)[state])
            except SQLAlchemyError:
                log.warning("delivery outbox depth failed", exc_info=True)
                return float("nan")

        return value

    for state in outbox.OPEN_STATES:
        DELIVERY_OUTBOX_DEPTH.labels(state=state).set_function(depth(state))
