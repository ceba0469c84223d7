"""Shared fixtures: databases on SQLite and on a real PostgreSQL, and a real server over HTTP."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory, upgrade
from tests.support.hindsight import HindsightServer, running_hindsight
from tests.support.postgres import postgres_cluster

SHARED = Path(__file__).resolve().parents[2] / "shared"

# No per-example time limit: on a loaded machine an example that runs slow once and fast on the
# retry is reported as flaky. Speed is measured by `recallops bench`, never asserted by a test.
settings.register_profile("recallops", deadline=None)
settings.load_profile("recallops")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


@pytest.fixture(scope="session")
def hindsight() -> Iterator[HindsightServer]:
    """One real Hindsight server per session (``tests.support.hindsight``); each test uses its own bank."""
    with running_hindsight() as server:
        yield server


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The same test on a real SQLite file and on a real PostgreSQL (a fresh schema each time)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'recallops.db'}"
        return
    url = request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine.dispose()
    yield url


@pytest.fixture
def db(database_url: str) -> Iterator[Session]:
    engine = make_engine(database_url)
    upgrade(engine)
    session = make_session_factory(engine)()
    try:
        yield session
    finally:
        session.rollback()
        session.close()
        engine.dispose()
