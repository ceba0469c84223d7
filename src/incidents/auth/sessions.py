"""Server-side sessions: a row per signed-in browser, so ending one takes effect everywhere at once.

The cookie carries a random secret; only its SHA-256 is stored. A session counts while its row is
not ended, it was used within the idle timeout and it is younger than the absolute lifetime, and its
user is enabled. Sign-out ends one row; a password change, disabling the user and "sign out
everywhere" end all of the user's rows in the same transaction as the change, so every replica
refuses the old cookie on its next request. ``last_seen_at`` is written at most once a minute per
session, so browsing does not turn every page view into a write.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from incidents.auth.models import User, UserSession
from incidents.timeutil import utcnow

SEEN_PRECISION = timedelta(minutes=1)


@dataclass(frozen=True)
class SessionPolicy:
    idle: timedelta
    lifetime: timedelta


@dataclass(frozen=True)
class LiveSession:
    id: int
    user: User
    needs_touch: bool


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def start_session(*, db_session: Session, user: User) -> str:
    """A new session for ``user``; returns the secret for the cookie (stored only as a hash)."""
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    db_session.add(UserSession(secret_hash=_hash(secret), user_id=user.id, created_at=now, last_seen_at=now))
    db_session.flush()
    return secret


def live_session(
    *, db_session: Session, secret: str, policy: SessionPolicy, now: datetime | None = None
) -> LiveSession | None:
    """The session for this secret while it still counts, else ``None``. Reads only."""
    if not secret or len(secret) > 128:
        return None
    row = db_session.scalar(select(UserSession).where(UserSession.secret_hash == _hash(secret)))
    if row is None or row.ended_at is not None:
        return None
    now = now or utcnow()
    if now - row.last_seen_at > policy.idle or now - row.created_at > policy.lifetime:
        return None  # timed out: refused from now on, whether or not anyone marks the row
    user = db_session.get(User, row.user_id)
    if user is None or user.disabled_at is not None:
        return None
    return LiveSession(id=row.id, user=user, needs_touch=now - row.last_seen_at > SEEN_PRECISION)


def touch(*, db_session: Session, session_id: int) -> None:
    db_session.execute(update(UserSession).where(UserSession.id == session_id).values(last_seen_at=utcnow()))


def end_session(*, db_session: Session, secret: str, reason: str = "signed out") -> None:
    _end(db_session, UserSession.secret_hash == _hash(secret), reason, utcnow())


def end_user_sessions(*, db_session: Session, user_id: int, reason: str) -> int:
    """End every live session of the user; returns how many were live."""
    return _end(db_session, UserSession.user_id == user_id, reason, utcnow())


def _end(db_session: Session, condition: object, reason: str, now: datetime) -> int:
    result = db_session.execute(
        update(UserSession)
        .where(condition, UserSession.ended_at.is_(None))  # type: ignore[arg-type]
        .values(ended_at=now, ended_reason=reason)
    )
    db_session.flush()
    return int(getattr(result, "rowcount", 0) or 0)
