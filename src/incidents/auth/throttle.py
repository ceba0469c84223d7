"""Sign-in throttling in the database, so every replica counts the same failures.

Failures are counted per name *at* an address (5 before a wait) and per address across names (20,
against spraying many names from one place), never per name alone: a lockout therefore never keeps
the right password out when it comes from an address that has not failed, and an attacker cannot
lock the real ``oncall`` out by guessing from elsewhere. Once a key reaches its limit, each further
failure doubles the wait (1 minute, 2, 4 ... at most 15), and a key with no failure for an hour is
forgotten. An attempt is counted *before* its password is checked, in its own committed
transaction with the key rows locked, so parallel guesses (on any replica) cannot slip past the
limit while the slow hash is verified; a correct password clears its name-at-address count and
takes back its count on the address. A refused attempt is not counted: waiting is enough.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from incidents.auth.models import SignInFailure
from incidents.timeutil import utcnow

PAIR_LIMIT = 5
ADDRESS_LIMIT = 20
FIRST_WAIT = timedelta(minutes=1)
MAX_WAIT = timedelta(minutes=15)
FORGET_AFTER = timedelta(hours=1)


@dataclass(frozen=True)
class Key:
    digest: str
    limit: int


def keys_for(name: str, address: str | None) -> list[Key]:
    """The keys an attempt counts against: this name at this address, and this address."""
    where = address or "unknown"
    texts = [(f"pair\x1f{name.casefold()}\x1f{where}", PAIR_LIMIT), (f"addr\x1f{where}", ADDRESS_LIMIT)]
    return [Key(hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest(), n) for t, n in texts]


def wait_after(failures: int, limit: int) -> timedelta | None:
    """How long a key is blocked once it holds ``failures``: none below the limit, then doubling."""
    if failures < limit:
        return None
    doublings: int = min(failures - limit, 16)
    return min(MAX_WAIT, FIRST_WAIT * (1 << doublings))


def admit(*, db_session: Session, keys: list[Key], now: datetime | None = None) -> float | None:
    """``None`` with the attempt counted, or the seconds to wait (nothing counted). The caller commits."""
    now = now or utcnow()
    forget_stale(db_session=db_session, now=now)
    rows = _locked(db_session, keys)
    waits = [(row.blocked_until - now).total_seconds() for row in rows.values() if row.blocked_until]
    if waits and max(waits) > 0:
        return max(waits)
    for key in keys:
        row = rows[key.digest]
        failures = 1 if now - row.last_failure_at > FORGET_AFTER else row.failures + 1
        wait = wait_after(failures, key.limit)
        row.failures, row.last_failure_at = failures, now
        row.blocked_until = now + wait if wait is not None else None
    db_session.flush()
    return None


def succeeded(*, db_session: Session, keys: list[Key]) -> None:
    """The right password: forget the name-at-address count, take this attempt off the address."""
    pair, address = keys
    db_session.execute(delete(SignInFailure).where(SignInFailure.key == pair.digest))
    db_session.execute(
        update(SignInFailure)
        .where(SignInFailure.key == address.digest, SignInFailure.failures > 0)
        .values(failures=SignInFailure.failures - 1)
    )
    db_session.flush()


def forget_stale(*, db_session: Session, now: datetime | None = None) -> int:
    """Delete keys with no failure for ``FORGET_AFTER`` (they would count from zero anyway)."""
    cutoff = (now or utcnow()) - FORGET_AFTER
    result = db_session.execute(delete(SignInFailure).where(SignInFailure.last_failure_at < cutoff))
    return int(getattr(result, "rowcount", 0) or 0)


def _locked(db_session: Session, keys: list[Key]) -> dict[str, SignInFailure]:
    """The keys' rows, created when missing, locked until the caller's commit (PostgreSQL: FOR UPDATE;
    SQLite: the caller holds the single writer's lock)."""
    dialect = db_session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    now = utcnow()
    for key in keys:
        db_session.execute(
            insert(SignInFailure)
            .values(key=key.digest, failures=0, last_failure_at=now, blocked_until=None)
            .on_conflict_do_nothing(index_elements=["key"])
        )
    found = db_session.scalars(
        select(SignInFailure)
        .where(SignInFailure.key.in_([k.digest for k in keys]))
        .order_by(SignInFailure.key)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return {row.key: row for row in found}
