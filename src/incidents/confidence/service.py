"""The versioned fits of a bank: recording a refit, the one in use, and rolling back. Functions flush;
the caller commits."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from incidents.confidence.models import ConfidenceFit


@dataclass(frozen=True)
class Judged:
    """What a refit was judged on: its labels and its held-out figures against the fit in use."""

    labels: int
    engineer_labels: int
    held_out_loss: float
    current_loss: float
    ece: float
    adopted: bool
    note: str = ""


def active_fit(*, db_session: Session, bank_id: str) -> ConfidenceFit | None:
    """The fit briefings use; None means the shipped fit."""
    return db_session.scalar(
        select(ConfidenceFit).where(ConfidenceFit.bank_id == bank_id, ConfidenceFit.active.is_(True))
    )


def latest_fit(*, db_session: Session, bank_id: str) -> ConfidenceFit | None:
    """The last refit, adopted or not."""
    return db_session.scalar(
        select(ConfidenceFit)
        .where(ConfidenceFit.bank_id == bank_id)
        .order_by(ConfidenceFit.version.desc())
        .limit(1)
    )


def fits(*, db_session: Session, bank_id: str) -> list[ConfidenceFit]:
    return list(
        db_session.scalars(
            select(ConfidenceFit).where(ConfidenceFit.bank_id == bank_id).order_by(ConfidenceFit.version)
        )
    )


def _activate(db_session: Session, bank_id: str, row: ConfidenceFit | None) -> None:
    db_session.execute(update(ConfidenceFit).where(ConfidenceFit.bank_id == bank_id).values(active=False))
    if row is not None:
        row.active = True
    db_session.flush()


def record_fit(*, db_session: Session, bank_id: str, data: dict[str, Any], judged: Judged) -> ConfidenceFit:
    """A new version; when adopted it becomes the fit in use."""
    last = db_session.scalar(select(func.max(ConfidenceFit.version)).where(ConfidenceFit.bank_id == bank_id))
    row = ConfidenceFit(
        bank_id=bank_id,
        version=(last or 0) + 1,
        labels=judged.labels,
        engineer_labels=judged.engineer_labels,
        held_out_loss=judged.held_out_loss,
        current_loss=judged.current_loss,
        ece=judged.ece,
        adopted=judged.adopted,
        active=False,
        note=judged.note,
        data=data,
    )
    db_session.add(row)
    db_session.flush()
    if judged.adopted:
        _activate(db_session, bank_id, row)
    return row


def rollback(*, db_session: Session, bank_id: str) -> tuple[ConfidenceFit | None, ConfidenceFit | None]:
    """Stop using the active fit and go back to the adopted one before it (or the shipped fit).

    Returns (the fit left, the fit now in use); the fit left is None when the shipped fit was in use."""
    current = active_fit(db_session=db_session, bank_id=bank_id)
    if current is None:
        return None, None
    previous = db_session.scalar(
        select(ConfidenceFit)
        .where(
            ConfidenceFit.bank_id == bank_id,
            ConfidenceFit.adopted.is_(True),
            ConfidenceFit.version < current.version,
        )
        .order_by(ConfidenceFit.version.desc())
        .limit(1)
    )
    current.adopted = False
    current.held = True
    current.note = (current.note + " rolled back").strip()
    _activate(db_session, bank_id, previous)
    return current, previous


def held(*, db_session: Session, bank_id: str) -> bool:
    """Whether a rollback holds the fit in use: automatic refits wait for an operator's refit."""
    found = select(ConfidenceFit.id).where(ConfidenceFit.bank_id == bank_id, ConfidenceFit.held.is_(True))
    return db_session.scalar(found.limit(1)) is not None


def release(*, db_session: Session, bank_id: str) -> None:
    """An operator refits: the rollback's hold ends."""
    db_session.execute(update(ConfidenceFit).where(ConfidenceFit.bank_id == bank_id).values(held=False))
    db_session.flush()
