"""API tokens for machines: alert senders, automation, dashboards.

The secret is shown once, at creation; only its SHA-256 is stored (the secret is 32 random bytes, so
a fast hash is enough: there is nothing to brute-force). A PagerDuty sender uses a token with
``alerts:write`` as its ``routing_key``, so PagerDuty's integration key maps to the same table.
"""

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from incidents.auth.models import ApiToken
from incidents.database import table_of
from incidents.timeutil import utcnow

TOKEN_PREFIX = "rops_"
REPLACE_HISTORY = "history:replace"  # rewrites imported history: no role has it, a token only when asked
SCOPES = ("alerts:write", "incidents:write", REPLACE_HISTORY, "read")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,63}$")
LAST_USED_PRECISION = timedelta(minutes=5)  # a busy sender must not turn every request into a write


_TOKENS = table_of(ApiToken)
# Checked on every authenticated request: built once with a bind parameter, plain columns, no ORM load.
_LIVE_BY_HASH = select(_TOKENS.c.id, _TOKENS.c.name, _TOKENS.c.scopes, _TOKENS.c.last_used_at).where(
    _TOKENS.c.token_hash == bindparam("token_hash"), _TOKENS.c.revoked_at.is_(None)
)
_TOUCH = update(_TOKENS).where(_TOKENS.c.id == bindparam("token_id")).values(last_used_at=bindparam("now"))


@dataclass(frozen=True)
class LiveToken:
    """What a request learns from its token: who, which scopes, when it was last seen."""

    id: int
    name: str
    scopes: frozenset[str]
    last_used_at: datetime | None


class TokenError(ValueError):
    """A token request that cannot be honoured; the message says why."""


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # shown once, never stored


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(*, db_session: Session, name: str, scopes: list[str]) -> IssuedToken:
    if not NAME_PATTERN.match(name):
        raise TokenError("name must be 1-64 letters, digits or . _ @ : + - and start with a letter or digit")
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise TokenError(f"unknown scope {', '.join(unknown)}; choose from {', '.join(SCOPES)}")
    if not scopes:
        raise TokenError(f"give at least one scope: {', '.join(SCOPES)}")
    if db_session.scalar(select(ApiToken.id).where(ApiToken.name == name)) is not None:
        raise TokenError(f"a token named {name!r} exists already (revoked names are not reused)")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        name=name,
        token_hash=hash_secret(secret),
        prefix=secret[: len(TOKEN_PREFIX) + 6],
        scopes=sorted(set(scopes)),
    )
    db_session.add(token)
    db_session.flush()
    return IssuedToken(token=token, secret=secret)


def list_tokens(*, db_session: Session, include_revoked: bool = False) -> list[ApiToken]:
    query = select(ApiToken).order_by(ApiToken.name)
    if not include_revoked:
        query = query.where(ApiToken.revoked_at.is_(None))
    return list(db_session.scalars(query))


def revoke_token(*, db_session: Session, name: str) -> ApiToken:
    token = db_session.scalar(select(ApiToken).where(ApiToken.name == name))
    if token is None:
        raise TokenError(f"no token named {name!r}")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        db_session.flush()
    return token


def verify_token(*, db_session: Session, secret: str) -> LiveToken | None:
    """The live token for this secret, or ``None``. Looked up by hash, so timing reveals nothing."""
    if not secret or len(secret) > 512:
        return None
    row = db_session.execute(_LIVE_BY_HASH, {"token_hash": hash_secret(secret)}).first()
    if row is None:
        return None
    return LiveToken(id=row.id, name=row.name, scopes=frozenset(row.scopes), last_used_at=row.last_used_at)


def needs_touch(token: LiveToken) -> bool:
    """``last_used_at`` to a few minutes' precision: a busy sender must not make every request a write."""
    return token.last_used_at is None or utcnow() - token.last_used_at > LAST_USED_PRECISION


def touch(*, db_session: Session, token: LiveToken) -> LiveToken:
    now = utcnow()
    db_session.execute(_TOUCH, {"token_id": token.id, "now": now})
    return LiveToken(id=token.id, name=token.name, scopes=token.scopes, last_used_at=now)
