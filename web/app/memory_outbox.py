"""Delivering the memory outbox: owed writes become labeled records in the bank.

The worker claims due rows (``incidents.resolution.outbox``), builds each record from its payload and
retains it under its document id (an upsert, so a redelivery after a crash still leaves one record),
then marks the row synced, or failing with the error and a backed-off next attempt. Database work and
memory calls never overlap: the claim is committed before memory is called, and each outcome is
committed on its own, so a slow or dead memory layer holds no database lock. The memory lane
(``web.app.lanes``) renews each claim's short lease while it is delivered, so rows claimed by a
replica that dies are delivered by another within one lease.
"""

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.database import transaction
from incidents.incident.models import Incident
from incidents.incident.service import add_event
from incidents.locking import serialized_writes
from incidents.resolution import outbox
from incidents.resolution.outbox import Claim
from incidents.resolution.service import payload_record
from incidents.timeutil import utcnow
from memory.service import (
    CorrectionRecord,
    Retain,
    log_correction,
    log_incident,
)
from web.app.container import Container
from web.app.lanes import Outcomes, QueueLane
from web.app.metrics import OUTBOX_DELIVERIES, OUTBOX_DEPTH, OUTBOX_OLDEST_PENDING

log = logging.getLogger(__name__)

BATCH = 20
ACTOR = "recallops"


def delivery_timeout(container: Container) -> float:
    return container.settings.memory.memory_timeout_s + 5


async def retain_payload(bank: Retain, kind: str, payload: dict[str, Any]) -> None:
    """One outbox payload into memory: the incident's labeled record, or a correction of its own."""
    if kind == "correction":
        data = payload["correction"]
        record = CorrectionRecord(
            document_id=data["document_id"],
            corrects=data["corrects"],
            service=data["service"],
            timestamp=datetime.fromisoformat(data["created_at"]),
            text=data["text"],
            author=data["author"],
        )
        await log_correction(bank, record, severity=data.get("severity"))
        return
    corrections = payload.get("corrections") or []
    metadata = {"version": str(payload.get("version", 1)), "title": str(payload.get("title", ""))}
    if corrections:
        metadata["corrections"] = ",".join(c["document_id"] for c in corrections)
    metadata.update({k: str(v) for k, v in (payload.get("history") or {}).items()})  # an accepted draft's
    await log_incident(bank, payload_record(payload), severity=payload.get("severity"), metadata=metadata)


def memory_lane(container: Container) -> QueueLane[Claim]:
    """The memory outbox's lane: due writes claimed, retained, and each outcome recorded."""
    lease_s = container.settings.web.lease_s

    def claim(db: Session, limit: int) -> list[Claim]:
        return outbox.claim_due(db_session=db, limit=limit, lease_s=lease_s)

    async def run(claim: Claim) -> str:
        return await deliver_claim(container, claim)

    return QueueLane(
        "memory",
        queue=outbox.MEMORY_WRITES,
        sessions=container.sessions,
        claim=claim,
        run=run,
        lease_of=lambda claim: claim.lease,
        lease_s=lease_s,
        concurrency=container.settings.web.memory_write_concurrency,
        poll_s=container.settings.web.worker_poll_s,
    )


async def deliver_due(container: Container, *, limit: int = BATCH) -> Outcomes:
    """Claim and deliver what is due now; counts how claimed rows ended (synced, failed, superseded)."""
    return await memory_lane(container).drain_once(limit)


async def deliver_claim(container: Container, claim: Claim) -> str:
    """Retain one claimed write (the whole call bounded) and record the outcome; the row's new state."""
    try:
        await asyncio.wait_for(
            retain_payload(container.bank, claim.kind, claim.payload), delivery_timeout(container)
        )
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        next_at = _record_failure(container, claim, error)
        OUTBOX_DELIVERIES.labels("failed").inc()
        log.warning(
            "memory write failed",
            extra={"document_id": claim.document_id, "error": error, "next_attempt_at": next_at.isoformat()},
        )
        return "failed"
    if _record_success(container, claim):
        OUTBOX_DELIVERIES.labels("synced").inc()
        return "synced"
    return "superseded"


def _record_failure(container: Container, claim: Claim, error: str) -> datetime:
    with transaction(container.sessions) as db, serialized_writes(db):
        next_at = outbox.fail(db_session=db, claim=claim, error=error)
        db.commit()
    return next_at


def _record_success(container: Container, claim: Claim) -> bool:
    with transaction(container.sessions) as db, serialized_writes(db):
        done = outbox.complete(db_session=db, claim=claim)
        if done and claim.incident_id is not None:
            incident = db.scalar(select(Incident).where(Incident.id == claim.incident_id))
            if incident is not None:
                add_event(
                    db_session=db,
                    incident=incident,
                    kind="memory_synced",
                    actor=ACTOR,
                    message=_synced_message(claim),
                    data={"document_id": claim.document_id, "kind": claim.kind},
                )
        db.commit()
    return done


def _synced_message(claim: Claim) -> str:
    if claim.kind == "correction":
        return f"Correction written to memory as {claim.document_id}"
    return f"Record written to memory as {claim.document_id} (version {claim.payload.get('version', 1)})"


def track_memory_outbox(sessions: sessionmaker[Session]) -> None:
    """Queue depth and the oldest unsynced write, read at scrape time: exact across every process."""

    def read() -> outbox.QueueStats | None:
        try:
            with sessions() as db:
                return outbox.queue_stats(db_session=db)
        except SQLAlchemyError:
            log.warning("memory outbox stats failed", exc_info=True)
            return None

    def depth(state: str) -> Callable[[], float]:
        def value() -> float:
            stats = read()
            return float("nan") if stats is None else float(getattr(stats, state))

        return value

    def oldest() -> float:
        stats = read()
        if stats is None:
            return float("nan")
        if stats.oldest_unsynced_at is None:
            return 0.0
        return max(0.0, (utcnow() - stats.oldest_unsynced_at).total_seconds())

    for state in ("pending", "failing"):
        OUTBOX_DEPTH.labels(state).set_function(depth(state))
    OUTBOX_OLDEST_PENDING.set_function(oldest)
