"""The confidence fitted to this team: refits from the bank's labels, the fit briefings use, rollback.

A refit reads every label of the bank (an engineer's at full weight, an inferred one at
``team_fit.INFERRED_WEIGHT``), fits the shipped fit's recalibration on them and judges it on held-out
folds against the fit in use; every refit is stored as a version, and only one that is no worse is
adopted. The worker refits after every ``REFIT_EVERY`` new or changed labels; ``recallops confidence
refit`` refits now. A rollback holds: the worker refits nothing until an operator's refit, or the next
few labels would adopt again what the operator just left.
"""

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import inspect

from agent.core.confidence import FEATURES, Fit, Scorer, shipped_fit
from agent.core.team_fit import INFERRED_WEIGHT, Label, TeamFit, decide
from incidents.confidence import service as fits
from incidents.confidence.models import ConfidenceFit
from incidents.database import transaction
from incidents.labels import service as labels
from incidents.labels.models import RelevanceLabel
from incidents.locking import advisory_lock, serialized_writes
from web.app.container import Container
from web.app.lanes import Task

log = logging.getLogger(__name__)

REFIT_EVERY = 5


@dataclass(frozen=True)
class Status:
    """What the profile page and ``recallops confidence status`` say."""

    version: int | None  # None: the shipped fit
    incidents: int
    labels: int
    engineer_labels: int
    ece: float | None
    last_refit: datetime | None
    pending: int  # labels given or changed since the last refit
    bar: float  # the probability from which a precedent is listed
    resolution: float  # probabilities closer than this keep retrieval's order
    held: bool = False  # a rollback paused the automatic refits
    rejected: int | None = None  # the last refit's version, when it was not adopted

    @property
    def sentence(self) -> str:
        if self.version is None:
            said = (
                f"Confidence: the shipped fit ({self.labels} label(s) from your incidents so far, "
                f"refitted after every {REFIT_EVERY})."
            )
        else:
            when = self.last_refit.strftime("%Y-%m-%d %H:%M UTC") if self.last_refit else "never"
            said = (
                f"Confidence fitted on {self.incidents} of your incidents ({self.labels} labels, "
                f"{self.engineer_labels} by engineers), ECE {self.ece:.3f}, precedents listed from "
                f"{self.bar:.0%} likely relevant and ranked by it when {self.resolution * 100:.0f} points "
                f"apart or more, last refit {when}."
            )
        if self.rejected is not None:
            said += f" The last refit (v{self.rejected}) was not adopted: worse on held-out folds."
        if self.held:
            said += (
                " Automatic refits are paused since a rollback; `recallops confidence refit` resumes them."
            )
        return said


def _label(row: RelevanceLabel) -> Label:
    weight = 1.0 if row.how == labels.ENGINEER else INFERRED_WEIGHT
    return Label(tuple(row.features), row.mark == "same_failure", weight, str(row.incident_id))


def _scorer(row: ConfidenceFit | None, base: Fit) -> Scorer:
    """The stored refit, or ``base`` when there is none or it was made for other features (a release
    that changed them): briefings go on with the shipped fit until the labels that fit the new features
    refit it."""
    if row is None or tuple(row.data.get("features", ())) != FEATURES:
        return base
    return TeamFit.from_dict(row.data, base)


def load_fit(container: Container) -> Scorer:
    """The fit briefings of this bank use: the active refit, else the shipped fit. A database not yet
    migrated to hold fits has none (``recallops ask`` reads without migrating)."""
    with container.sessions() as db:
        if not inspect(db.get_bind()).has_table(ConfidenceFit.__tablename__):
            return shipped_fit()
        row = fits.active_fit(db_session=db, bank_id=container.settings.memory.bank_id)
        return _scorer(row, shipped_fit())


def refit(container: Container, *, force: bool = False) -> ConfidenceFit | None:
    """Refit when ``REFIT_EVERY`` labels changed since the last refit and no rollback holds the fit in use;
    with ``force`` (an operator's refit) now, from every label, ending the hold. The stored version, or
    None when there was nothing to fit."""
    bank_id = container.settings.memory.bank_id
    base = shipped_fit()
    with container.sessions() as db:
        if not force and fits.held(db_session=db, bank_id=bank_id):
            return None
        last = fits.latest_fit(db_session=db, bank_id=bank_id)
        pending = labels.changed_since(
            db_session=db, bank_id=bank_id, since=last.created_at if last else None
        )
        if not force and pending < REFIT_EVERY:
            return None
        rows = labels.bank_labels(db_session=db, bank_id=bank_id)
        active = fits.active_fit(db_session=db, bank_id=bank_id)
        current = _scorer(active, base)
    usable = [r for r in rows if len(r.features) == len(base.mean)]
    if not usable:
        return None
    seen = active.labels if active is not None else 0
    decision = decide([_label(r) for r in usable], base, current, seen=seen)
    judged = fits.Judged(
        labels=len(usable),
        engineer_labels=sum(r.how == labels.ENGINEER for r in usable),
        held_out_loss=decision.held_out_loss,
        current_loss=decision.current_loss,
        ece=decision.held_out_ece,
        adopted=decision.adopted,
        note="" if decision.adopted else "not adopted: worse than the fit in use on held-out folds",
    )
    with transaction(container.sessions) as db, serialized_writes(db):
        # Every replica's worker refits when labels are due: the first to record wins, and one that
        # fitted the same labels meanwhile drops its fit rather than store a twin of it.
        advisory_lock(db, f"confidence refit {bank_id}")
        newest = fits.latest_fit(db_session=db, bank_id=bank_id)
        if not force and _version(newest) != _version(last):
            return None
        fits.release(db_session=db, bank_id=bank_id)
        row = fits.record_fit(db_session=db, bank_id=bank_id, data=decision.fit.as_dict(), judged=judged)
        db.commit()
        db.refresh(row)
        db.expunge(row)
    log.info("confidence refit", extra={"version": row.version, "adopted": row.adopted})
    return row


def _version(row: ConfidenceFit | None) -> int | None:
    return row.version if row is not None else None


def status(container: Container) -> Status:
    bank_id = container.settings.memory.bank_id
    with container.sessions() as db:
        active = fits.active_fit(db_session=db, bank_id=bank_id)
        last = fits.latest_fit(db_session=db, bank_id=bank_id)
        rows = labels.bank_labels(db_session=db, bank_id=bank_id)
        pending = labels.changed_since(
            db_session=db, bank_id=bank_id, since=last.created_at if last else None
        )
        scorer = _scorer(active, shipped_fit())
        return Status(
            version=active.version if active else None,
            incidents=len({r.incident_id for r in rows}),
            labels=len(rows),
            engineer_labels=sum(r.how == labels.ENGINEER for r in rows),
            ece=active.ece if active else None,
            last_refit=last.created_at if last else None,
            pending=pending,
            bar=scorer.bar,
            resolution=scorer.resolution,
            held=fits.held(db_session=db, bank_id=bank_id),
            rejected=last.version if last is not None and not last.adopted and not last.held else None,
        )


def rollback(container: Container) -> tuple[int | None, int | None]:
    """Back to the previous adopted fit (or the shipped one): (version left, version now in use)."""
    with transaction(container.sessions) as db, serialized_writes(db):
        left, now = fits.rollback(db_session=db, bank_id=container.settings.memory.bank_id)
        db.commit()
        return (left.version if left else None), (now.version if now else None)


def refit_task(container: Container) -> Task:
    """The worker task: refit once enough labels changed since the last refit."""

    async def refit_when_due() -> bool:
        return await asyncio.to_thread(refit, container) is not None

    return refit_when_due
