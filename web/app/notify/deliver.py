"""Delivering the delivery outbox: claimed rows become messages, each outcome recorded after the send.

Like the memory outbox's worker (``web.app.memory_outbox``): the claim is committed before anything
leaves the process, each send runs in a thread under a timeout (up to ``PARALLEL_SENDS`` side by
side) with no database connection held, and its outcome (sent with the receiver's message id,
failing with a backed-off next attempt, or failed) is committed on its own. What a message says is
read at send time from the incident and the briefing version the row names (a stored version never
changes), and rendered by ``web.app.notify.render``.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.delivery import outbox
from incidents.delivery.outbox import Claim
from incidents.delivery.routing import INCIDENT_RESOLVED, sync_channels
from incidents.grades import service as grades
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from web.app.metrics import DELIVERIES, DELIVERY_OUTBOX_DEPTH
from web.app.notify.config import ChannelConfig, NotifySettings, load_channels, redact
from web.app.notify.render import Notice, compose
from web.app.notify.senders import SendError, send
from web.app.worker import Task

log = logging.getLogger(__name__)

BATCH = 20
PARALLEL_SENDS = 8


@dataclass
class Notifier:
    """The configured channels of this process, with the settings their deliveries use."""

    settings: NotifySettings
    channels: dict[str, ChannelConfig] = field(default_factory=dict)
    base_url: str = ""

    @classmethod
    def load(cls, settings: NotifySettings, *, base_url: str) -> "Notifier":
        channels = {channel.name: channel for channel in load_channels(settings)}
        return cls(
            settings=settings, channels=channels, base_url=(settings.public_url or base_url).rstrip("/")
        )

    @property
    def secrets(self) -> list[str]:
        return [secret for channel in self.channels.values() for secret in channel.secrets()]

    @property
    def lease_s(self) -> float:
        """Longer than any one send may take, so a live worker's lease never expires under it."""
        return 3 * self.settings.notify_timeout_s + 30

    def sync(self, sessions: sessionmaker[Session]) -> None:
        """Write this configuration's routing into the database, where event writers read it."""
        with transaction(sessions) as db, serialized_writes(db):
            sync_channels(db_session=db, routes=[channel.route() for channel in self.channels.values()])
            db.commit()


@dataclass(frozen=True)
class DeliveryReport:
    sent: int = 0
    failing: int = 0
    failed: int = 0

    @property
    def attempted(self) -> int:
        return self.sent + self.failing + self.failed


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


async def deliver_claim(sessions: sessionmaker[Session], notifier: Notifier, claim: Claim) -> str:
    """Send one claimed row and record what happened; returns the row's new state."""
    channel = notifier.channels.get(claim.channel)
    max_attempts = notifier.settings.notify_max_attempts
    if channel is None:
        return _record_failure(
            sessions, claim, f"channel {claim.channel!r} is no longer configured", False, None, max_attempts
        )
    with sessions() as db:
        notice, thread = _notice(db, notifier, claim)
    timeout = notifier.settings.notify_timeout_s
    try:
        ref = await asyncio.wait_for(
            asyncio.to_thread(send, channel, notice, delivery_id=claim.id, thread=thread, timeout_s=timeout),
            timeout + 5,
        )
    except SendError as exc:
        error = redact(str(exc), channel.secrets())
        return _record_failure(sessions, claim, error, exc.retry, exc.retry_after_s, max_attempts)
    except Exception as exc:  # a timeout or a library failing in a way it does not document
        error = redact(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, channel.secrets())
        return _record_failure(sessions, claim, error, True, None, max_attempts)
    with transaction(sessions) as db, serialized_writes(db):
        outbox.complete(db_session=db, claim=claim, ref=ref)
        db.commit()
    DELIVERIES.labels(channel=claim.channel, outcome="sent").inc()
    return "sent"


def _record_failure(
    sessions: sessionmaker[Session],
    claim: Claim,
    error: str,
    retry: bool,
    retry_after_s: float | None,
    max_attempts: int,
) -> str:
    with transaction(sessions) as db, serialized_writes(db):
        state = outbox.fail(
            db_session=db,
            claim=claim,
            error=error,
            retry=retry,
            retry_after_s=retry_after_s,
            max_attempts=max_attempts,
        )
        db.commit()
    DELIVERIES.labels(channel=claim.channel, outcome=state).inc()
    log.warning(
        "delivery failed",
        extra={"delivery_id": claim.id, "channel": claim.channel, "error": error, "state": state},
    )
    return state


async def deliver_due(
    sessions: sessionmaker[Session],
    notifier: Notifier,
    *,
    limit: int = BATCH,
    only_ids: list[int] | None = None,
) -> DeliveryReport:
    """Claim what is due now and send it; returns how each claimed row ended."""
    with transaction(sessions) as db, serialized_writes(db):
        claims = outbox.claim_due(db_session=db, limit=limit, lease_s=notifier.lease_s, only_ids=only_ids)
        db.commit()
    # A batch never holds two rows of one thread (the claim takes only the earliest open one), so its
    # rows go out side by side: a slow receiver (a Matrix login) does not hold up the others.
    slots = asyncio.Semaphore(PARALLEL_SENDS)

    async def one(claim: Claim) -> str:
        async with slots:
            return await deliver_claim(sessions, notifier, claim)

    states = list(await asyncio.gather(*(one(claim) for claim in claims)))
    return DeliveryReport(
        sent=states.count("sent"), failing=states.count("failing"), failed=states.count("failed")
    )


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


def delivery_task(sessions: sessionmaker[Session], notifier: Notifier) -> Task:
    async def deliver_notifications() -> bool:
        report = await deliver_due(sessions, notifier)
        return report.attempted > 0

    return deliver_notifications
