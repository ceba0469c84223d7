"""``recallops resolve-draft``: draft an incident's post-mortem from an engineer's notes, maybe commit it.

The operator names who is resolving (``--as``): that name opens the resolution conversation and is
``resolved_by`` when ``--commit`` stores it. A committed post-mortem owes memory a write, which the
server's worker (or ``recallops memory sync``) delivers. With ``--json`` stdout carries the draft
object and nothing else.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from web.cli.common import found_incident, memory_guard, print_result, refuse, run

if TYPE_CHECKING:
    from agent.resolution.conversation import ResolutionDraft
    from web.app.settings import Settings

NOT_WRITTEN = 3


def render(result: ResolutionDraft) -> str:
    """The draft as the engineer checks it: each field with where it came from and what it cites."""
    state = (
        f"logged as resolution version {result.resolution_version}"
        if result.logged
        else "not written (a draft)"
    )
    lines = [f"Post-mortem of {result.incident} by {result.engineer} ({result.mode}): {state}", ""]
    for name, field in result.draft:
        cites = "".join(f"[{n}]" for n in field.citations)
        lines.append(f"{name.replace('_', ' ').capitalize()} ({field.source}) {cites}".rstrip() + ":")
        lines += [f"  {line}" for line in (field.text or "(empty)").splitlines()]
    lines += ["", "Evidence:"]
    lines += [f"  [{item.n}] {item.title}{' (flagged)' if item.flagged else ''}" for item in result.evidence]
    lines += [f"WARNING: {warning}" for warning in result.warnings]
    return "\n".join(lines)


async def _draft(
    settings: Settings, public_id: str, notes: str, commit: bool, engineer: str
) -> ResolutionDraft | None:
    from incidents.incident.service import IncidentNotFound
    from web.app import resolution_drafts
    from web.app.container import Container

    container = Container.build(settings)
    try:
        return await resolution_drafts.draft(
            container, public_id=public_id, notes=notes, commit=commit, engineer=engineer
        )
    except IncidentNotFound:
        return None
    finally:
        await container.aclose()


def resolve_draft(
    incident: str = typer.Argument(..., help="The incident id, e.g. INC-0001."),
    notes: str = typer.Option(..., "--notes", help="What happened and what fixed it ('-' reads stdin)."),
    engineer: str = typer.Option(..., "--as", help="Who is resolving: the name recorded as resolved_by."),
    commit: bool = typer.Option(False, "--commit", help="Store the post-mortem when it is complete."),
    as_json: bool = typer.Option(False, "--json", help="Print the draft object only."),
) -> None:
    """Draft an incident's post-mortem from your notes (labeled lines like 'Root cause:' fill fields)."""
    from agent.resolution.conversation import MAX_NOTES_CHARS
    from web.app.settings import Settings

    if notes == "-":
        notes = sys.stdin.read()
    notes, engineer = notes.strip(), engineer.strip()
    if not notes or not engineer:
        refuse("--notes and --as must not be empty")
    if len(notes) > MAX_NOTES_CHARS:
        refuse(f"the notes are over {MAX_NOTES_CHARS} characters")
    memory_guard(writes=False)
    result = found_incident(run(_draft(Settings(), incident, notes, commit, engineer)), incident)
    print_result(result, as_json=as_json, render=render)
    if commit and not result.logged:
        typer.echo("error: nothing was written (see the warnings)", err=True)
        raise typer.Exit(code=NOT_WRITTEN)
