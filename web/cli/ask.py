"""``recallops ask`` and ``recallops replay``: a briefing from the terminal, nothing stored.

With ``--json`` stdout carries the JSON object and nothing else (progress and warnings go to
stderr), so the output pipes straight into ``jq``.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from web.cli.common import found_incident, memory_guard, print_result, refuse, run

if TYPE_CHECKING:
    from agent.briefing.replay import ListDiff, Replay
    from agent.core.evidence import AlertInput
    from agent.core.schema import Briefing, Claim
    from web.app.settings import Settings


class MemoryChoice(StrEnum):
    on = "on"
    off = "off"


def _section(title: str, items: list[Claim]) -> list[str]:
    if not items:
        return []
    return ["", f"{title}:", *(f"  - {item.text}" for item in items)]


def render(briefing: Briefing) -> str:
    """The briefing as an on-call engineer reads it in a terminal, evidence numbered as cited."""
    from agent.briefing.head import render_text

    lines = [
        f"Seen before: {briefing.seen_before}   mode: {briefing.mode}   memory: {briefing.memory}",
        "",
    ]
    if briefing.head is not None:
        lines += [render_text(briefing.head), "", "Full briefing:", ""]
    lines.append(briefing.summary)
    lines += _section("Likely causes", briefing.likely_causes)
    lines += _section("First checks", briefing.first_checks)
    lines += _section("Suggested fix", briefing.suggested_fix)
    lines += _section("Risky actions (made it worse before)", briefing.risky_actions)
    if briefing.related_incidents:
        lines += ["", "Related incidents:"]
        lines += [f"  - {r.id} ({r.service}): {r.why}" for r in briefing.related_incidents]
    lines += ["", "Evidence:"]
    for item in briefing.evidence:
        marks = "".join(
            f" ({m})" for m, on in (("uncertain", item.uncertain), ("flagged", item.flagged)) if on
        )
        lines.append(f"  [{item.n}] {item.title}{marks}")
    for warning in briefing.warnings:
        lines.append(f"WARNING: {warning}")
    return "\n".join(lines)


def _diff_lines(name: str, diff: ListDiff) -> list[str]:
    out = [f"  + {name}: {text}" for text in diff.added]
    return out + [f"  - {name}: {text}" for text in diff.removed]


def render_replay(result: Replay) -> str:
    d = result.diff
    seen = f"seen before {d.seen_before.off} with memory off, {d.seen_before.on} with memory on"
    lines = [
        f"Replay of {result.incident}: {seen}",
        "",
        "What memory changed:" if d.changed else "Memory changed nothing for this incident.",
    ]
    for name in ("related_incidents", "likely_causes", "first_checks", "suggested_fix", "risky_actions"):
        lines += _diff_lines(name.replace("_", " "), getattr(d, name))
    lines += ["", "--- memory on ---", render(result.memory_on)]
    return "\n".join(lines)


async def _ask(settings: Settings, alert: AlertInput, memory_on: bool) -> Briefing:
    from web.app.agent import open_agent
    from web.app.container import Container

    container = Container.build(settings, migrate=False)
    try:
        async with open_agent(container) as agent:
            return await agent.brief(alert, memory_on=memory_on)
    finally:
        await container.aclose()


def ask(
    text: str = typer.Argument(..., help="The alert text, as it fired ('-' reads it from stdin)."),
    service: str | None = typer.Option(None, "--service", "-s", help="Recall within this service first."),
    title: str = typer.Option("", help="The alert's title, if it has one apart from the text."),
    memory: MemoryChoice = typer.Option(MemoryChoice.on, help="off: brief without recalling anything."),
    as_json: bool = typer.Option(False, "--json", help="Print the briefing object only."),
) -> None:
    """Brief an alert from past incidents (nothing is stored)."""
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        refuse("the alert text is empty")
    if memory == MemoryChoice.on:
        from memory.service import start_loading_embedder

        start_loading_embedder()  # the recall embeds the alert: load the model while the rest imports
        memory_guard(writes=False)
    from agent.core.evidence import AlertInput
    from web.app.settings import Settings

    alert = AlertInput(text=text.strip(), service=service or None, title=title.strip())
    briefing = run(_ask(Settings(), alert, memory == MemoryChoice.on))
    print_result(briefing, as_json=as_json, render=render)


async def _replay(settings: Settings, public_id: str) -> Replay | None:
    from agent.briefing.replay import replay
    from incidents.incident import service as incidents
    from web.app.agent import alert_for_incident, open_agent
    from web.app.container import Container

    container = Container.build(settings)
    try:
        with container.sessions() as db:
            incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
            if incident is None:
                return None
            alert = alert_for_incident(db_session=db, incident=incident)
        async with open_agent(container) as agent:
            return await replay(agent, alert)
    finally:
        await container.aclose()


def replay_command(
    incident: str = typer.Argument(..., help="The incident id, e.g. INC-0001."),
    as_json: bool = typer.Option(False, "--json", help="Print the replay object only."),
) -> None:
    """Brief an incident with memory off and on and show what memory changed (nothing is stored)."""
    from web.app.settings import Settings

    memory_guard(writes=False)
    result = found_incident(run(_replay(Settings(), incident)), incident)
    print_result(result, as_json=as_json, render=render_replay)
