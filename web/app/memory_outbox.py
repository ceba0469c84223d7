"""Delivering the memory outbox: owed writes become labeled records in the bank.

The worker claims due rows (``incidents.resolution.outbox``), builds each record from its payload and
retains it under its document id (an upsert, so a redelivery after a crash still leaves one record),
then marks the row synced, or failing with the error and a backed-off next attempt. Database work and
memory calls never overlap: the claim is committed before memory is called, and each outcome is
committed on its own, so a slow or dead memory layer holds no database lock. The batch's lease is
short and renewed while it is delivered (``web.app.leases``), so rows claimed by a replica that dies
are delivered by another within one lease.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
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
from web.app.leases import Heartbeat
from web.app.metrics import OUTBOX_DELIVERIES, OUTBOX_DEPTH, OUTBOX_OLDEST_PENDING
from web.app.worker import Task

log = logging.getLogger(__name__)

BATCH = 20
ACTOR = "recallops"


@dataclass(frozen=True)
class DeliveryReport:
    synced: int = 0
    failed: int = 0
    superseded: int = 0

    @property
    def attempted(self) -> int:
        return self.synced + self.failed + self.superseded


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


async def deliver_due(container: Container, *, limit: int = BATCH) -> DeliveryReport:
    """Claim and deliver what is due now; returns what happened to each claimed row."""
    lease_s = container.settings.web.lease_s
    with transaction(container.sessions) as db, serialized_writes(db):
        claims = outbox.claim_due(db_session=db, limit=limit, lease_s=lease_s)
        db.commit()
    if not claims:
        return DeliveryReport()
    lease = BatchLease(container, [claim.id for claim in claims], claims[0].locked_until)
    with Heartbeat(lease.renew, lease_s=lease_s, what=f"memory outbox rows {lease.ids}"):
        return await _deliver(container, claims)


@dataclass
class BatchLease:
    """The lease on one claimed batch, renewed for the rows of it not yet delivered."""

    container: Container
    ids: list[int]
    locked_until: datetime

    def renew(self) -> bool:
        with transaction(self.container.sessions) as db, serialized_writes(db):
            self.locked_until = outbox.renew(
                db_session=db,
                ids=self.ids,
                locked_until=self.locked_until,
                lease_s=self.container.settings.web.lease_s,
            )
            db.commit()
        return True


async def _deliver(container: Container, claims: list[Claim]) -> DeliveryReport:
    synced = failed = superseded = 0
    for claim in claims:
        try:
            await asyncio.wait_for(
                retain_payload(container.bank, claim.kind, claim.payload), delivery_timeout(container)
            )
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            next_at = _record_failure(container, claim, error)
            failed += 1
            OUTBOX_DELIVERIES.labels("failed").inc()
            log.warning(
                "memory write failed",
                extra={
                    "document_id": claim.document_id,
                    "error": error,
                    "next_attempt_at": next_at.isoformat(),
                },
            )
            continue
        if _record_success(container, claim):
            synced += 1
            OUTBOX_DELIVERIES.labels("synced").inc()
        else:
            superseded += 1
    return DeliveryReport(synced=synced, failed=failed, superseded=superseded)


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


def outbox_task(container: Container) -> Task:
    async def deliver_memory_outbox() -> bool:
        report = await deliver_due(container)
        return report.attempted > 0

    return deliver_memory_outbox
