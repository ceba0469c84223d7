"""A team fit put in place the way a refit the worker adopted is stored, for tests of what reads it."""

from typing import Any

from incidents.confidence import service as fits
from incidents.database import transaction
from web.app.container import Container


def adopt(container: Container, data: dict[str, Any], *, labels: int = 40) -> None:
    """Store ``data`` (a fit's ``as_dict``) as the bank's adopted fit, judged on ``labels`` labels."""
    judged = fits.Judged(
        labels=labels, engineer_labels=labels, held_out_loss=0.3, current_loss=0.4, ece=0.05, adopted=True
    )
    with transaction(container.sessions) as db:
        fits.record_fit(db_session=db, bank_id=container.settings.memory.bank_id, data=data, judged=judged)
        db.commit()
