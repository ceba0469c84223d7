"""Replay: the same alert briefed with memory off and on, and what memory changed, as data.

Nothing is stored. Items are compared by their text with citation markers removed (the two runs
number their evidence differently), so the diff shows which incidents, causes, checks, fixes and
risky actions memory added, and which the memory-off briefing had that memory replaced.
"""

import re

from pydantic import BaseModel

from agent.briefing.loop import Agent
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing, Claim, SeenBefore

_MARKERS = re.compile(r"\s*\[\d+\]")
_SPACE = re.compile(r"\s+")


class ListDiff(BaseModel):
    added: list[str]
    removed: list[str]
    unchanged: list[str]


class SeenBeforeDiff(BaseModel):
    off: SeenBefore
    on: SeenBefore


class ReplayDiff(BaseModel):
    related_incidents: ListDiff
    likely_causes: ListDiff
    first_checks: ListDiff
    suggested_fix: ListDiff
    risky_actions: ListDiff
    seen_before: SeenBeforeDiff
    changed: bool


class Replay(BaseModel):
    incident: str | None
    memory_off: Briefing
    memory_on: Briefing
    diff: ReplayDiff


def _plain(text: str) -> str:
    return _SPACE.sub(" ", _MARKERS.sub("", text)).strip()


def _list_diff(off: list[str], on: list[str]) -> ListDiff:
    keys_off = {s.casefold() for s in off}
    keys_on = {s.casefold() for s in on}
    return ListDiff(
        added=[s for s in on if s.casefold() not in keys_off],
        removed=[s for s in off if s.casefold() not in keys_on],
        unchanged=[s for s in on if s.casefold() in keys_off],
    )


def _items(items: list[Claim]) -> list[str]:
    return list(dict.fromkeys(_plain(item.text) for item in items))


def diff(off: Briefing, on: Briefing) -> ReplayDiff:
    sections = {
        key: _list_diff(_items(getattr(off, key)), _items(getattr(on, key)))
        for key in ("likely_causes", "first_checks", "suggested_fix", "risky_actions")
    }
    related = _list_diff([r.id for r in off.related_incidents], [r.id for r in on.related_incidents])
    changed = off.seen_before != on.seen_before or any(
        d.added or d.removed for d in [related, *sections.values()]
    )
    return ReplayDiff(
        related_incidents=related,
        seen_before=SeenBeforeDiff(off=off.seen_before, on=on.seen_before),
        changed=changed,
        **sections,
    )


async def replay(agent: Agent, alert: AlertInput) -> Replay:
    off = await agent.brief(alert, memory_on=False)
    on = await agent.brief(alert, memory_on=True)
    return Replay(incident=alert.incident_id, memory_off=off, memory_on=on, diff=diff(off, on))
