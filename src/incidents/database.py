"""Engine, sessions and schema migrations.

The caller owns the transaction: services ``flush()``, the request dependency or the worker commits.
SQLite runs in WAL mode with a busy timeout and foreign keys on, so the web app and the worker can
share one file.
"""

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Engine, MetaData, Table, create_engine, event, inspect, text
from sqlalchemy.engine import URL, CursorResult, Result, make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql.dml import Insert

from incidents.sqlite_wal import use_wal

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
VERSION_TABLE = "alembic_version"  # where alembic keeps the revisions a database is at
_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=(.*)$", re.MULTILINE)
_QUOTED = re.compile(r"""["']([^"']+)["']""")
# pg_advisory_xact_lock key held while migrating: any constant all replicas share.
MIGRATION_LOCK_KEY = 0x7265_6361_6C6C_6F70  # "recallop"

SQLITE_TIMEOUT_S = 10.0  # how long a SQLite connection waits for another's lock
SQLITE_POOL_SIZE = 24  # kept connections: enough for concurrent requests and the worker lanes together

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    use_wal(dbapi_connection, timeout_s=SQLITE_TIMEOUT_S)
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_TIMEOUT_S * 1000)}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class Unusable(ValueError):
    """A configured database or folder that cannot be used at all; the message names the setting."""


def make_folder(path: Path, setting: str) -> None:
    """Create ``path`` (and its parents), or say in one line which setting names a folder that cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unusable(f"cannot create the folder {path} ({setting}): {exc.strerror or exc}") from exc


def make_engine(url: str) -> Engine:
    """An engine for ``url``; a missing driver is ``Unusable`` (SQLAlchemy would raise ImportError)."""
    parsed = make_url(url)
    try:
        return _engine(url, parsed)
    except ImportError as exc:
        raise Unusable(
            f"no driver for the database URL's {parsed.drivername!r} is installed ({exc.name} is missing); "
            "RecallOps runs on SQLite and PostgreSQL"
        ) from exc


def _engine(url: str, parsed: URL) -> Engine:
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            make_folder(Path(parsed.database).parent, "RECALLOPS_DATA_DIR or the database URL")
        # Connections are kept, not opened per request: opening one switches it to WAL and sets its
        # pragmas, and under concurrent intake the default pool of 5 opened and closed one per alert.
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_TIMEOUT_S},
            pool_size=SQLITE_POOL_SIZE,
            max_overflow=SQLITE_POOL_SIZE,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.drivername in ("postgresql", "postgres"):
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on any error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def rowcount(result: Result[Any]) -> int:
    """Rows an UPDATE touched: ``Session.execute`` is typed as returning a plain ``Result``."""
    return cast("CursorResult[Any]", result).rowcount


def table_of(model: type["Base"]) -> Table:
    """A mapped class's table, typed as one (SQLAlchemy types ``__table__`` as any ``FromClause``)."""
    return cast(Table, model.__table__)


def insert_ignoring_conflicts(dialect: str, table: Table, index_elements: list[str]) -> Insert:
    """``INSERT ... ON CONFLICT (index_elements) DO NOTHING`` in the dialect's own spelling.

    The dialect's module is imported here: the engine has loaded its own already, and the other one
    is never needed (the PostgreSQL dialect alone is a fifth of a second of every command's start).
    """
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing(index_elements=index_elements)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing(index_elements=index_elements)


def alembic_config(url: str) -> "Config":
    from alembic.config import Config  # migrations only: a process that never migrates never loads alembic

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(engine: Engine) -> None:
    """Apply every migration; run at start and by ``recallops db upgrade``.

    On PostgreSQL the upgrade holds a transaction-scoped advisory lock, so replicas that start (or
    upgrade) at the same moment take turns: the first applies the migrations, the others wait for its
    commit and then find the schema at head. PostgreSQL's DDL is transactional, so a replica killed
    mid-upgrade leaves the schema as it was, and the lock with it. A schema already at head is left
    without loading alembic (most of a second, paid by every command that opens the database).
    """
    if at_head(engine):
        return
    refuse_unknown(schema_revisions(engine)[0])
    from alembic import command

    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


class SchemaNotReady(RuntimeError):
    """The database schema is not at this release's head (not migrated yet, or migrated further)."""


def _script_revisions() -> tuple[set[str], set[str]]:
    """Every revision of this release's migration scripts, and those another one revises.

    Read from the scripts' ``revision`` and ``down_revision`` lines (a string, ``None`` or a tuple of
    strings), without importing alembic."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        found = dict(_REVISION_LINE.findall(path.read_text(encoding="utf-8")))
        if "revision" in found:
            revisions.update(_QUOTED.findall(found["revision"]))
            revised.update(_QUOTED.findall(found.get("down_revision", "")))
    return revisions, revised


def script_heads() -> set[str]:
    """The head revisions of this release's migration scripts: every revision no other one revises."""
    revisions, revised = _script_revisions()
    return revisions - revised


def _named(revisions: set[str]) -> str:
    return ", ".join(sorted(revisions)) or "no revision"


def refuse_unknown(current: set[str]) -> None:
    """A schema at a revision this release has no script for was migrated by a newer release: neither
    an upgrade nor a wait can help, and saying so beats alembic's "can't locate revision"."""
    unknown = current - _script_revisions()[0]
    if unknown:
        raise SchemaNotReady(
            f"the database schema is at revision {_named(unknown)}, which this release does not know: a "
            "newer release migrated it; run that release, or restore the database from before its upgrade"
        )


def schema_revisions(engine: Engine) -> tuple[set[str], set[str]]:
    """The revisions the database is at (alembic's version table; none before the first migration),
    and the head revisions this release expects."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return set(), script_heads()
        current = set(connection.scalars(text(f"SELECT version_num FROM {VERSION_TABLE}")))
    return current, script_heads()


def at_head(engine: Engine) -> bool:
    current, heads = schema_revisions(engine)
    return current == heads


def _not_told(note: str) -> None:
    return None


def wait_for_head(
    engine: Engine, *, timeout_s: float, poll_s: float = 0.5, waiting: Callable[[str], None] = _not_told
) -> None:
    """Return once another process has migrated the schema to head; raise after ``timeout_s``.

    For replicas started with ``RECALLOPS_MIGRATE_ON_START=false``: one release job runs
    ``recallops db upgrade`` and the replicas wait for it instead of racing it. A wait that begins is
    told to ``waiting`` once, in a sentence naming both revisions: a replica that is neither listening
    nor saying why for minutes looks hung.
    """
    deadline = time.monotonic() + timeout_s
    told = False
    while True:
        current, heads = schema_revisions(engine)
        if current == heads:
            return
        refuse_unknown(current)
        if time.monotonic() >= deadline:
            waited = f" (waited {timeout_s:g}s)" if timeout_s else ""
            raise SchemaNotReady(
                f"the database schema is at {_named(current)}, this release needs {_named(heads)}: run "
                f"`recallops db upgrade`{waited}"
            )
        if not told:
            waiting(
                f"waiting up to {timeout_s:g}s for the database schema to reach {_named(heads)} (it is at "
                f"{_named(current)}; RECALLOPS_MIGRATE_ON_START=false): run `recallops db upgrade` once"
            )
            told = True
        time.sleep(poll_s)


def ready_schema(
    engine: Engine, *, migrate: bool, wait_s: float, waiting: Callable[[str], None] = _not_told
) -> None:
    """Bring the schema to head, or, where this process must not migrate
    (``RECALLOPS_MIGRATE_ON_START=false``), wait up to ``wait_s`` for the process that does, telling
    ``waiting`` when it starts to."""
    if migrate:
        upgrade(engine)
    else:
        wait_for_head(engine, timeout_s=wait_s, waiting=waiting)
