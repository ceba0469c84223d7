"""``recallops profile``: the team reliability profile (and each service's)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from web.cli.common import ALLOW_OTHER_MEMORY, memory_guard, refuse, run
from web.cli.text import hanging

if TYPE_CHECKING:
    from memory.service import Operation
    from web.app import profile
    from web.app.container import Container

app = typer.Typer(help="The team reliability profile: recurring failure patterns.", no_args_is_help=True)
POLL_S = 0.2


async def _refresh(
    service: str | None, wait: bool, wait_s: float
) -> tuple[Operation, profile.ProfileView | None]:
    import asyncio

    from web.app import profile
    from web.app.container import Container

    container = Container.build()
    try:
        scope = profile.asked_scope(container, service)
        operation = await profile.request_refresh(container, scope)
        # The embedded driver refreshes inside this process: leaving early would abandon the refresh.
        if not wait and container.bank.driver != "embedded":
            return operation, None
        try:
            async with asyncio.timeout(wait_s):
                operation = await _until_done(container, operation)
        except TimeoutError:
            raise TimeoutError(
                f"refresh {operation.id} still {operation.status} after {wait_s:.0f}s"
            ) from None
        return operation, await profile.view(container, scope)
    finally:
        await container.aclose()


async def _until_done(container: Container, operation: Operation) -> Operation:
    import asyncio

    from web.app import profile

    while operation.status not in ("completed", "failed"):
        await asyncio.sleep(POLL_S)
        found = await profile.get_operation(container, operation.id)
        if found is None:
            raise RuntimeError(f"memory lost track of operation {operation.id}")
        operation = found
    return operation


async def _show(service: str | None) -> profile.ProfileView:
    from web.app import profile
    from web.app.container import Container

    container = Container.build()
    try:
        return await profile.view(container, profile.asked_scope(container, service))
    finally:
        await container.aclose()


@app.command()
def refresh(
    service: str | None = typer.Option(None, help="Refresh this service's profile instead of the team's."),
    wait: bool = typer.Option(False, "--wait", help="Poll the refresh operation until it finishes."),
    timeout: float = typer.Option(300.0, min=1, help="With --wait: give up after this many seconds."),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Refresh the profile now (it is also refreshed automatically after new memory writes)."""
    from memory.service import MemoryUnavailable
    from web.app.profile import UnknownService

    memory_guard(writes=True, allowed=allow_other_memory)
    try:
        operation, view = run(_refresh(service, wait, timeout))
    except UnknownService as exc:
        raise typer.BadParameter(str(exc), param_hint="--service") from exc
    except MemoryUnavailable as exc:
        refuse(f"memory unavailable, nothing was refreshed: {exc}")
    except (TimeoutError, RuntimeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    typer.echo(f"operation {operation.id}: {operation.status}")
    if operation.status == "failed":
        typer.echo(f"error: {operation.error}", err=True)
        raise typer.Exit(code=1)
    if view is not None:
        typer.echo(f"last_refreshed_at {_iso(view.last_refreshed_at)}; {len(view.patterns)} patterns")


@app.command()
def show(
    service: str | None = typer.Option(None, help="Show this service's profile instead of the team's."),
    as_json: bool = typer.Option(False, "--json", help="Print the profile object and nothing else."),
) -> None:
    """Print the profile: its patterns with their citations, and how fresh it is."""
    from web.app.profile import UnknownService

    memory_guard(writes=False)
    try:
        view = run(_show(service))
    except UnknownService as exc:
        raise typer.BadParameter(str(exc), param_hint="--service") from exc
    if as_json:
        typer.echo(json.dumps(view.to_dict(), indent=2))
        return
    lines = [
        f"{view.scope.name} ({view.source})",
        f"last_refreshed_at:   {_iso(view.last_refreshed_at)}",
        f"last_memory_seen_at: {_iso(view.last_memory_seen_at)}",
    ]
    if view.stale:
        lines.append(f"stale: memory has writes up to {_iso(view.memory_last_written_at)} not in it yet")
    if view.memory_error:
        lines.append(f"memory unavailable: {view.memory_error}")
    lines += [
        "",
        view.content or "The profile has not been built yet: run `recallops profile refresh --wait`.",
    ]
    typer.echo(hanging("\n".join(lines)))


def _iso(value: object) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else "never"
