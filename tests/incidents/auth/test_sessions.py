"""Server-side sessions on SQLite and PostgreSQL: what ends them, and the two timeouts."""

from datetime import timedelta

from sqlalchemy.orm import Session

from incidents.auth import sessions, users
from incidents.timeutil import utcnow

POLICY = sessions.SessionPolicy(idle=timedelta(hours=1), lifetime=timedelta(days=1))
PASSWORD = "correct horse battery"


def _signed_in(db: Session, name: str = "ana") -> str:
    user = users.add_user(db_session=db, name=name, role="engineer", password=PASSWORD)
    return sessions.start_session(db_session=db, user=user)


def live(db: Session, secret: str, **kwargs: object) -> bool:
    return sessions.live_session(db_session=db, secret=secret, policy=POLICY, **kwargs) is not None  # type: ignore[arg-type]


def test_a_session_counts_until_it_is_signed_out(db: Session) -> None:
    secret = _signed_in(db)
    other = sessions.start_session(db_session=db, user=users.get_user(db_session=db, name="ana"))  # type: ignore[arg-type]
    assert live(db, secret) and live(db, other)
    sessions.end_session(db_session=db, secret=secret)
    assert not live(db, secret) and live(db, other)
    assert not live(db, "made-up") and not live(db, "")


def test_password_change_disable_and_everywhere_end_every_session(db: Session) -> None:
    first = _signed_in(db, "ana")
    users.set_password(db_session=db, name="ana", password="another long secret")
    assert not live(db, first)
    second = sessions.start_session(db_session=db, user=users.get_user(db_session=db, name="ana"))  # type: ignore[arg-type]
    assert users.sign_out_everywhere(db_session=db, name="ana") == 1
    assert not live(db, second)
    third = sessions.start_session(db_session=db, user=users.get_user(db_session=db, name="ana"))  # type: ignore[arg-type]
    users.disable_user(db_session=db, name="ana")
    assert not live(db, third)


def test_idle_timeout_and_absolute_lifetime(db: Session) -> None:
    secret = _signed_in(db)
    assert live(db, secret, now=utcnow() + timedelta(minutes=59))
    assert not live(db, secret, now=utcnow() + timedelta(hours=2))  # idle for two hours
    kept_busy = sessions.start_session(db_session=db, user=users.get_user(db_session=db, name="ana"))  # type: ignore[arg-type]
    found = sessions.live_session(db_session=db, secret=kept_busy, policy=POLICY)
    assert found is not None
    found_row_id = found.id
    # Busy all along (seen a minute ago) but older than the lifetime: it ends anyway.
    db.execute(
        sessions.update(sessions.UserSession)
        .where(sessions.UserSession.id == found_row_id)
        .values(created_at=utcnow() - timedelta(days=2), last_seen_at=utcnow())
    )
    assert not live(db, kept_busy)
