"""What every command group shares: a migrated database session under the process's settings, the
check of this shell's memory against the service's, and how a command prints the object it answers with.

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


ALLOW_OTHER_MEMORY = typer.Option(
    False,
    "--allow-other-memory",
    help="Write to this shell's memory even when recallops serve recorded another one for the service.",
)


def memory_guard(*, writes: bool, allowed: bool = False, moving_from: str | None = None) -> None:
    """Compare this shell's memory settings with the memory ``recallops serve`` recorded, before the
    command does anything: a command that writes memory refuses when they differ (one line naming
    both, exit 2) unless ``allowed`` (``--allow-other-memory``); a reading command, or an allowed
    write, goes on with a warning on stderr. Nothing recorded yet (no service ran on this database)
    says nothing.

    ``moving_from`` is the memory a copy reads: copying the service's own memory to this shell's is
    how the service moves, so it goes on, saying the service still uses the old one."""
    from incidents.database import make_engine, make_session_factory
    from web.app.service_memory import describe, other_memory, settings_to_set
    from web.app.settings import Settings

    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        other = other_memory(make_session_factory(engine), settings)
    finally:
        engine.dispose()
    if other is None:
        return
    if other.location == moving_from:
        typer.echo(
            f"recallops: warning: the service still uses {describe(other)}: start it with this shell's "
            f"memory settings ({settings.memory.location}) to use the copied records",
            err=True,
        )
        return
    differs = f"this shell's memory is {settings.memory.location}, but the service uses {describe(other)}"
    if writes and not allowed:
        refuse(
            f"{differs}: give this shell the service's memory settings ({settings_to_set(other, settings)}), "
            "or pass --allow-other-memory to write here anyway"
        )
    typer.echo(f"recallops: warning: {differs}", err=True)


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
