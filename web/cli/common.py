"""What every command group shares: a migrated database session under the process's settings, and
how a command prints the object it answers with.

Importing a command module must stay cheap (``recallops --help`` loads every one of them), so this
module and the command modules import the service's parts inside the commands that use them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import typer

if TYPE_CHECKING:
    from pydantic import BaseModel
    from sqlalchemy.orm import Session

M = TypeVar("M", bound="BaseModel")
T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, with asyncio imported only by the commands that run a loop."""
    import asyncio

    return asyncio.run(main)


@contextmanager
def cli_session() -> Iterator[Session]:
    """One committed unit of work against the configured database, migrated first (or, with
    ``RECALLOPS_MIGRATE_ON_START=false``, refused until ``recallops db upgrade`` has migrated it)."""
    from incidents.database import make_engine, make_session_factory, ready_schema, transaction
    from web.app.settings import Settings

    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        ready_schema(engine, migrate=settings.incidents.migrate_on_start, wait_s=0)
        with transaction(make_session_factory(engine)) as session:
            yield session
    finally:
        engine.dispose()


@contextmanager
def refusing_session(refused: type[Exception]) -> Iterator[Session]:
    """``cli_session`` where the service refusing (``refused``) is an error line and exit 1, not a trace."""
    try:
        with cli_session() as session:
            yield session
    except refused as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc


def found_incident(result: M | None, incident: str) -> M:
    """The command's answer, or exit 1 saying the incident does not exist."""
    if result is None:
        typer.echo(f"error: no incident {incident!r}", err=True)
        raise typer.Exit(code=1)
    return result


def print_result(result: M, *, as_json: bool, render: Callable[[M], str]) -> None:
    """With ``--json`` the object alone on stdout (so it pipes into ``jq``), else its rendering."""
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        typer.echo(render(result))
