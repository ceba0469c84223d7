import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from subprocess import PIPE

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.orm import Session

from incidents.database import (
    SchemaNotReady,
    alembic_config,
    make_engine,
    schema_revisions,
    script_heads,
    upgrade,
    wait_for_head,
)
from incidents.models import Counter


def test_migrations_create_every_table(db: Session) -> None:
    names = set(inspect(db.get_bind()).get_table_names())
    assert {"alerts", "incidents", "incident_events", "api_tokens", "users", "memory_outbox"} <= names
    assert "service_memory" in names


def test_counter_round_trip(db: Session) -> None:
    db.add(Counter(name="incident", value=7))
    db.flush()
    assert db.get(Counter, "incident").value == 7


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_replicas_migrating_at_once_take_turns_and_all_find_the_schema_at_head(database_url: str) -> None:
    env = {**os.environ, "RECALLOPS_DATABASE_URL": database_url}
    upgrades = [
        subprocess.Popen(
            [sys.executable, "-m", "web.cli", "db", "upgrade"], env=env, stdout=PIPE, stderr=PIPE, text=True
        )
        for _ in range(3)
    ]
    for process in upgrades:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert "database at head" in out
    engine = make_engine(database_url)
    try:
        current, heads = schema_revisions(engine)
        assert current == heads and heads
    finally:
        engine.dispose()


def test_a_replica_that_does_not_migrate_waits_for_head_then_gives_up_naming_it(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with pytest.raises(SchemaNotReady, match=r"no revision.*recallops db upgrade"):
            wait_for_head(engine, timeout_s=0.2, poll_s=0.05)
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(wait_for_head, engine, timeout_s=60, poll_s=0.05)
            upgrade(make_engine(database_url))
            waiting.result(timeout=60)
    finally:
        engine.dispose()


def test_a_schema_a_newer_release_migrated_is_named_not_upgraded_nor_awaited(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine)
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(SchemaNotReady, match="revision 9999, which this release does not know"):
            upgrade(engine)
        with pytest.raises(SchemaNotReady, match="which this release does not know"):
            wait_for_head(engine, timeout_s=60)  # at once: no wait can help
    finally:
        engine.dispose()


def test_the_heads_read_from_the_scripts_are_alembics() -> None:
    """Commands find a database at head without importing alembic; the heads they read are its own."""
    from alembic.script import ScriptDirectory

    assert script_heads() == set(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads())


def test_a_database_of_the_release_before_gains_the_service_memory_table_and_loses_it_downgraded(
    database_url: str,
) -> None:
    """Revision 0013 adds where ``recallops serve`` records its memory; downgraded, the table goes."""
    from alembic import command

    engine = make_engine(database_url)
    config = alembic_config(database_url)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0012")
        assert "service_memory" not in inspect(engine).get_table_names()
        upgrade(engine)
        assert "service_memory" in inspect(engine).get_table_names()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0012")
        assert "service_memory" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
