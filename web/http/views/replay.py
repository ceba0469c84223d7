"""Replay made ready for the page: both briefings side by side, each line marked added, removed or same.

The comparison is the agent's own diff (text without citation markers, case-folded); this module only
looks each displayed line up in it, so the page and the API never disagree about what memory changed.
"""

import re
from dataclasses import dataclass
from typing import Any

from agent.briefing.replay import ListDiff, Replay
from web.http.views.briefing import SECTIONS, Anchors, BriefingView, Line, briefing_view

_MARKERS = re.compile(r"\s*\[\d+\]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Marked:
    line: Line
    change: str  # added | removed | same


@dataclass(frozen=True)
class Side:
    view: BriefingView
    sections: dict[str, list[Marked]]
    related: list[tuple[dict[str, Any], str]]


def _key(text: str) -> str:
    return _SPACE.sub(" ", _MARKERS.sub("", text)).strip().casefold()


def _side(data: dict[str, Any], diffs: dict[str, ListDiff], mark: str, anchors: Anchors) -> Side:
    """``mark`` is what this side's differences are: "added" on the memory-on side, "removed" off."""
    view = briefing_view(data, anchors)
    sections: dict[str, list[Marked]] = {}
    for key, _ in SECTIONS:
        changed = {_key(s) for s in getattr(diffs[key], mark)}
        items = data.get(key, [])
        sections[key] = [
            Marked(line=line, change=mark if _key(str(item.get("text", ""))) in changed else "same")
            for line, item in zip(view.sections[key], items, strict=True)
        ]
    changed_ids = set(getattr(diffs["related_incidents"], mark))
    related = [(r, mark if r.get("id") in changed_ids else "same") for r in view.related]
    return Side(view=view, sections=sections, related=related)


def replay_sides(result: Replay, public_id: str) -> tuple[Side, Side]:
    """Each side's citations point into its own evidence list (``#off-ev-2``, ``#on-ev-2``), and the
    alert's to the incident page's signal panel: the replay page has none."""
    diffs = {key: getattr(result.diff, key) for key, _ in SECTIONS} | {
        "related_incidents": result.diff.related_incidents
    }
    signal = f"/incidents/{public_id}#signal"
    off = _side(result.memory_off.model_dump(mode="json"), diffs, "removed", Anchors(signal, "off-ev-"))
    on = _side(result.memory_on.model_dump(mode="json"), diffs, "added", Anchors(signal, "on-ev-"))
    return off, on


_NOUNS = {
    "related_incidents": ("related incident", "related incidents"),
    "likely_causes": ("likely cause", "likely causes"),
    "first_checks": ("first check", "first checks"),
    "suggested_fix": ("fix step", "fix steps"),
    "risky_actions": ("risky action", "risky actions"),
}


def changes(result: Replay) -> tuple[list[str], list[str]]:
    """What memory added and what it replaced, as counted phrases: (["1 related incident", ...], [...])."""
    added, removed = [], []
    for key, (one, many) in _NOUNS.items():
        d: ListDiff = getattr(result.diff, key)
        if d.added:
            added.append(f"{len(d.added)} {one if len(d.added) == 1 else many}")
        if d.removed:
            removed.append(f"{len(d.removed)} {one if len(d.removed) == 1 else many}")
    return added, removed
