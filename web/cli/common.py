"""What every command group shares: a migrated database session under the process's settings, and
how a command prints the object it answers with.

Importing a command module must stay cheap (``recallops --help`` loads every one of them), so this
module and the command modules import the service's parts inside the commands that use them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from web.cli.text import hanging

if TYPE_CHECKING:
    from pydantic import BaseModel
    from sqlalchemy.orm import Session

M = TypeVar("M", bound="BaseModel")
T = TypeVar("T")

# The exit code of input a command cannot use (an option, a name, a file, a setting); 1 is kept for a run
# that found failures. The top-level help lists every code (``EXIT_CODES`` in ``web.cli``).
UNUSABLE = 2


def refuse(reason: str) -> NoReturn:
    """End the command on input it cannot use: one line saying what is wrong, exit 2, nothing done.

    The same line ``main`` prints for a bad setting, file or address and for an option that does not
    parse, so a script tells bad input from a run that found failures (exit 1) by the code alone."""
    typer.echo(f"recallops: {reason}", err=True)
    raise typer.Exit(code=UNUSABLE)


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
    """``cli_session`` where the service refusing what it was asked (``refused``: a name taken or
    unknown, a role or scope that does not exist) is ``refuse``'s one line and exit 2, not a trace."""
    try:
        with cli_session() as session:
            yield session
    except refused as exc:
        refuse(str(exc))


def found_incident(result: M | None, incident: str) -> M:
    """The command's answer, or ``refuse`` saying the incident does not exist."""
    if result is None:
        refuse(f"no incident {incident!r}")
    return result


def print_result(result: M, *, as_json: bool, render: Callable[[M], str]) -> None:
    """With ``--json`` the object alone on stdout (so it pipes into ``jq``), never wrapped; else its
    rendering, each long line wrapped to the terminal under its indent and list marker."""
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        typer.echo(hanging(render(result)))
