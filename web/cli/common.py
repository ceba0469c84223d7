"""What every command group shares: a migrated database session under the process's settings."""

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory, transaction, upgrade
from web.settings import Settings


@contextmanager
def cli_session() -> Iterator[Session]:
    """One committed unit of work against the configured database, migrated first."""
    engine = make_engine(Settings().database_url)
    try:
        upgrade(engine)
        with transaction(make_session_factory(engine)) as session:
            yield session
    finally:
        engine.dispose()
