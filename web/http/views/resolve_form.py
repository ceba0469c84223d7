"""The resolve form: its fields, and a first draft from the alert and the briefing.

The draft saves typing at 3 a.m. but claims nothing: root cause and steps come from the briefing's
suggestions, with their citation markers removed, marked "Unconfirmed, drafted from the briefing:" as the
resolution conversation marks them, and the form takes them only once the engineer has edited them to
what was verified (or removed the mark to confirm them). Submitted unchanged, another incident's cause
would become this one's, and the grade and the team's labels would confirm the briefing by its own words.
"""

import re
from dataclasses import dataclass
from typing import Any

from agent.resolution.drafter import FROM_BRIEFING
from incidents.alerts.models import Alert
from incidents.incident.models import Incident
from memory.service import POST_MORTEM, RESOLUTION_KIND_LABELS
from web.http.views.form_text import as_typed

_MARKERS = re.compile(r"\s*\[\d+\]")
# Briefings hedge weak matches ("Uncertain (moderate match): ..."); a post-mortem states what was verified.
_HEDGE = re.compile(r"^Uncertain \([a-z]+ match\):\s*")


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    hint: str
    required: bool
    max_length: int | None
    rows: int
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for a choice; empty for free text


def _fields() -> list[Field]:
    rows = {"error_signature": 2, "runbook_used": 1, "outcome": 2}
    choices = {"resolution_kind": (("", "not recorded"), *RESOLUTION_KIND_LABELS.items())}
    return [
        Field(
            name=field.name,
            label=field.words.capitalize(),
            hint=field.description,
            required=field.required,
            max_length=field.max_length,
            rows=rows.get(field.name, 4),
            options=choices.get(field.name, ()),
        )
        for field in POST_MORTEM
    ]


FIELDS = _fields()


def _plain(text: str) -> str:
    return _HEDGE.sub("", _MARKERS.sub("", text).strip())


# A past incident's outcome ("Outcome then (INC-…): 3,100 orders lost") is a fix item of the briefing, but
# not a step this incident took: submitted unchanged, it would put the other incident's figures here.
_NOT_A_STEP = frozenset({"outcome"})


def _items(briefing: dict[str, Any] | None, key: str) -> list[str]:
    """What each suggestion says (its claim's statement), without the lead that names the record it came
    from: "Root cause recorded for INC-2025-014: " confirmed as it stood would be this post-mortem's text."""
    return [
        str(item.get("statement") or "").strip() or _plain(str(item.get("text", "")))
        for item in (briefing or {}).get(key, [])
        if item.get("text") and item.get("field") not in _NOT_A_STEP
    ]


def draft(incident: Incident, alert: Alert | None, briefing: dict[str, Any] | None) -> dict[str, str]:
    """Initial values: what the alert showed, and what the briefing suggested (to be confirmed)."""
    values = {f.name: "" for f in FIELDS}
    if alert is not None:
        symptom = alert.summary or incident.title
        values["symptom"] = f"{symptom}. {alert.description}".strip() if alert.description else symptom
        labels = ", ".join(f"{k}={v}" for k, v in sorted(alert.labels.items()) if k not in ("alertname",))
        values["error_signature"] = f"{alert.alertname}{{{labels}}}" if labels else alert.alertname
        values["runbook_used"] = alert.runbook_url or alert.annotations.get("runbook_url", "")
    else:
        values["symptom"] = incident.title
    causes = _items(briefing, "likely_causes")
    if causes:
        values["root_cause"] = FROM_BRIEFING + causes[0]
    steps = _items(briefing, "suggested_fix")
    if steps:
        values["resolution_steps"] = FROM_BRIEFING + "\n".join(
            f"{i}. {step}" for i, step in enumerate(steps, 1)
        )
    return values


def _same(a: str, b: str) -> bool:
    """Equal as a browser sends them back (textareas come back with CRLF line ends)."""
    return as_typed(a).strip() == as_typed(b).strip()


def typed(sent: dict[str, str], first_draft: dict[str, str]) -> dict[str, str]:
    """The fields the engineer filled in: sent non-blank and changed from the form's first draft.

    A draft from notes fills the rest and leaves these as they are: what was typed by hand is worth
    more than anything drafted, and a prefilled value left untouched was never the engineer's word.
    """
    return {
        name: value
        for name, value in sent.items()
        if value.strip() and not _same(value, first_draft.get(name, ""))
    }


def unconfirmed(values: dict[str, str]) -> dict[str, str]:
    """The fields that still hold a suggestion as it was drafted, by field, in words."""
    mark = FROM_BRIEFING.strip()
    return {
        name: f'still the briefing\'s suggestion: write what was verified, or delete "{mark}" to confirm it'
        for name, value in values.items()
        if value.lstrip().startswith(mark)
    }
