"""Versioned confidence fits on SQLite and PostgreSQL: adopting, keeping a worse one out, rolling back."""

from sqlalchemy.orm import Session

from incidents.confidence import service as fits

BANK = "team-a"


def _judged(adopted: bool) -> fits.Judged:
    return fits.Judged(
        labels=10, engineer_labels=4, held_out_loss=0.5, current_loss=0.6, ece=0.03, adopted=adopted
    )


def test_an_adopted_fit_is_used_and_one_not_adopted_is_only_recorded(db: Session) -> None:
    first = fits.record_fit(db_session=db, bank_id=BANK, data={"v": 1}, judged=_judged(True))
    second = fits.record_fit(db_session=db, bank_id=BANK, data={"v": 2}, judged=_judged(False))
    assert (first.version, second.version) == (1, 2)
    active = fits.active_fit(db_session=db, bank_id=BANK)
    assert active is not None and active.version == 1
    latest = fits.latest_fit(db_session=db, bank_id=BANK)
    assert latest is not None and latest.version == 2
    assert fits.active_fit(db_session=db, bank_id="team-b") is None


def test_rollback_goes_to_the_adopted_fit_before_then_to_the_shipped_one(db: Session) -> None:
    fits.record_fit(db_session=db, bank_id=BANK, data={"v": 1}, judged=_judged(True))
    fits.record_fit(db_session=db, bank_id=BANK, data={"v": 2}, judged=_judged(True))
    left, now = fits.rollback(db_session=db, bank_id=BANK)
    assert left is not None and now is not None and (left.version, now.version) == (2, 1)
    left, now = fits.rollback(db_session=db, bank_id=BANK)
    assert left is not None and left.version == 1 and now is None
    assert fits.active_fit(db_session=db, bank_id=BANK) is None
    assert fits.rollback(db_session=db, bank_id=BANK) == (None, None)
