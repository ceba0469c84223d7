"""``recallops check-action INC-0001 "scale checkout to 18 pods"``: the action guard from a terminal.

Prints the verdict (risky, worked before, no record) with the records it rests on; with ``--json`` the
API's object alone. The check goes on the incident's timeline under ``--as`` (default ``cli``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from web.cli.common import found_incident, memory_guard, print_result, refuse, run

if TYPE_CHECKING:
    from web.app.check_action import CheckActionRead
    from web.app.settings import Settings


def render(result: CheckActionRead) -> str:
    lines = [f"{result.verdict.upper()} ({result.scope}): {result.sentence}"]
    for m in result.matches:
        when = f", {m.when.date().isoformat()}" if m.when else ""
        scope = "" if m.same_service else ", another service"
        lines.append(f"  - {m.record} ({m.service}{scope}{when}) {m.kind}, score {m.score:.2f}: {m.text}")
        if m.then and m.then != m.text:
            lines.append(f"      then: {m.then}")
    return "\n".join(lines)


async def _check(settings: Settings, incident: str, action: str, actor: str) -> CheckActionRead | None:
    from incidents.incident.service import IncidentNotFound
    from web.app.check_action import check_incident_action, check_read
    from web.app.container import Container

    container = Container.build(settings)
    try:
        result = await check_incident_action(container, public_id=incident, action=action, actor=actor)
    except IncidentNotFound:
        return None
    finally:
        await container.aclose()
    return check_read(result)


def check_action(
    incident: str = typer.Argument(..., help="The incident id, e.g. INC-0001."),
    action: str = typer.Argument(..., help="The move you are about to make, in your words."),
    actor: str = typer.Option("cli", "--as", help="Who is asking (the name on the timeline)."),
    as_json: bool = typer.Option(False, "--json", help="Print the check object only."),
) -> None:
    """Check a move against memory before you make it: risky, worked before, or no record."""
    from memory.service import MemoryUnavailable, start_loading_embedder

    action = " ".join(action.split())
    start_loading_embedder()  # the check embeds the action: load the model while the rest imports
    from web.app.check_action import MAX_ACTION_CHARS
    from web.app.settings import Settings

    if not action or len(action) > MAX_ACTION_CHARS:
        refuse(f"the action must be 1 to {MAX_ACTION_CHARS} characters")
    memory_guard(writes=False)
    try:
        result = run(_check(Settings(), incident, action, actor.strip() or "cli"))
    except MemoryUnavailable as exc:
        refuse(f"memory unavailable, nothing was checked: {exc}")
    print_result(found_incident(result, incident), as_json=as_json, render=render)
