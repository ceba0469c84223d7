"""Local user accounts: argon2id password hashes, roles, disabling without deleting.

Users are people who sign in to the pages; machines use API tokens. A user with no password hash
exists only for a trusted single-sign-on proxy. Disabling keeps the row, so names on old timelines
and resolutions still refer to someone, and the name can never be reused by a different person.
"""

import re
import secrets
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.auth.models import User
from incidents.auth.sessions import end_user_sessions
from incidents.timeutil import utcnow

ROLES = ("engineer", "viewer")
MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 1024
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")

_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verified against when the name is unknown, so sign-in takes as long for made-up names as real ones."""
    return _hasher.hash(secrets.token_urlsafe(16))


class UserError(ValueError):
    """A request about users that cannot be honoured; the message says why, in words a person can act on."""


def hash_password(password: str) -> str:
    check_password(password)
    return _hasher.hash(password)


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise UserError(f"password must be at least {MIN_PASSWORD_CHARS} characters")
    if len(password) > MAX_PASSWORD_CHARS:
        raise UserError(f"password must be at most {MAX_PASSWORD_CHARS} characters")


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def generate_password() -> str:
    return secrets.token_urlsafe(15)


def get_user(*, db_session: Session, name: str) -> User | None:
    return db_session.scalar(select(User).where(User.name == name))


def get_user_by_id(*, db_session: Session, user_id: int) -> User | None:
    return db_session.get(User, user_id)


def list_users(*, db_session: Session) -> list[User]:
    return list(db_session.scalars(select(User).order_by(User.name)))


def add_user(*, db_session: Session, name: str, role: str, password: str | None) -> User:
    """Create a user; ``password=None`` makes an account that can only sign in through the SSO proxy."""
    if not NAME_PATTERN.match(name):
        raise UserError(
            "name must be 1-64 characters: letters, digits and . _ @ + - (starting with a letter or digit)"
        )
    if role not in ROLES:
        raise UserError(f"role must be one of {', '.join(ROLES)}")
    if get_user(db_session=db_session, name=name) is not None:
        raise UserError(f"user {name!r} already exists")
    user = User(name=name, role=role, password_hash=hash_password(password) if password is not None else None)
    db_session.add(user)
    db_session.flush()
    return user


def authenticate(*, db_session: Session, name: str, password: str) -> User | None:
    """The active user with this name and password, or None, taking as long either way.

    A name no account could have (NUL, too long, odd characters) is never looked up."""
    user = get_user(db_session=db_session, name=name) if NAME_PATTERN.match(name) else None
    stored = user.password_hash if user is not None and user.password_hash else _dummy_hash()
    if not verify_password(stored, password):
        return None
    if user is None or user.password_hash is None or user.disabled_at is not None:
        return None
    if _hasher.check_needs_rehash(stored):
        user.password_hash = _hasher.hash(password)
        db_session.flush()
    return user


def set_password(*, db_session: Session, name: str, password: str) -> User:
    """A new password; every session of the user ends with the old one."""
    user = _existing(db_session, name)
    user.password_hash = hash_password(password)
    end_user_sessions(db_session=db_session, user_id=user.id, reason="password changed")
    db_session.flush()
    return user


def set_role(*, db_session: Session, name: str, role: str) -> User:
    if role not in ROLES:
        raise UserError(f"role must be one of {', '.join(ROLES)}")
    user = _existing(db_session, name)
    user.role = role
    db_session.flush()
    return user


def disable_user(*, db_session: Session, name: str) -> User:
    """Disable sign-in and end every session of the user."""
    user = _existing(db_session, name)
    if user.disabled_at is None:
        user.disabled_at = utcnow()
        end_user_sessions(db_session=db_session, user_id=user.id, reason="disabled")
        db_session.flush()
    return user


def sign_out_everywhere(*, db_session: Session, name: str) -> int:
    """End every session of the user (a lost laptop, a shared screen); returns how many were live."""
    return end_user_sessions(
        db_session=db_session, user_id=_existing(db_session, name).id, reason="everywhere"
    )


def _existing(db_session: Session, name: str) -> User:
    user = get_user(db_session=db_session, name=name)
    if user is None:
        raise UserError(f"no user named {name!r}")
    return user
