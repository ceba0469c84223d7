"""The evidence-only drafter: the post-mortem drafted deterministically, driving the same loop.

It is a product mode (the default without an LLM key), not a test double. Fields come from the
engineer's notes first (labeled sections such as ``Root cause:``; unlabeled notes are the resolution
steps), then the alert (symptom, error signature), then the incident's latest briefing for anything
still missing, labeled as drafted from the briefing. It submits ``log_incident`` only when the
engineer asked to commit and every required field has text; otherwise it answers with the draft, as a
value the loop takes as it is (never JSON for the loop to parse back).
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from agent.core.citations import plain_cited
from agent.core.conversation import ConversationView, ModelTurn, ToolCall
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing, Claim, Mode
from agent.resolution.answer import DraftAnswer
from agent.resolution.log_tool import LOG, REQUIRED_FIELDS
from agent.resolution.support import is_value
from memory.template import POST_MORTEM
from memory.template import POST_MORTEM_NAMES as FIELDS
from memory.text import clip

DraftSource = Literal["notes", "alert", "briefing", "model", "none"]
FROM_BRIEFING = "Unconfirmed, drafted from the briefing: "
MAX_FROM_BRIEFING = 3
# The words an engineer puts before a colon to start a section of their notes: each field's name
# in words, then the other words people use for it (``memory.template``).
LABELS: dict[str, tuple[str, ...]] = {f.name: (f.words, *f.aliases) for f in POST_MORTEM}
_LABEL_TO_FIELD = {label: name for name, labels in LABELS.items() for label in labels}
_ONE_LINE = frozenset(f.name for f in POST_MORTEM if f.kind in ("line", "kind"))
_SECTION = re.compile(
    r"^\s*(?:[-*#>]+\s*)?("
    + "|".join(re.escape(label) for label in sorted(_LABEL_TO_FIELD, key=len, reverse=True))
    + r")\s*[:：]\s?(.*)$",
    re.IGNORECASE,
)


def note_sections(notes: str) -> tuple[dict[str, str], str]:
    """The labeled sections of the notes by field, and the unlabeled text before or between them. A
    one-line field (a kind, a runbook) takes its label's line only: the line after it, under a label
    this template does not know, is loose text, not part of the kind."""
    sections: dict[str, list[str]] = {}
    loose: list[str] = []
    current: list[str] = loose
    for line in notes.splitlines():
        match = _SECTION.match(line)
        if match:
            name = _LABEL_TO_FIELD[match.group(1).lower()]
            sections.setdefault(name, []).append(match.group(2))
            current = loose if name in _ONE_LINE else sections[name]
            continue
        current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}, "\n".join(loose).strip()


@dataclass(frozen=True)
class DraftedField:
    text: str
    citations: list[int]
    source: DraftSource

    def marked(self) -> str:
        """The text with its citations as ``[n]`` markers, the form every answer takes in the loop."""
        return self.text + "".join(f" [{n}]" for n in self.citations) if self.text else ""


def _alert_fields(alert: AlertInput) -> tuple[str, str]:
    lines = [line.strip() for line in alert.text.splitlines() if line.strip()]
    told = [line for line in lines if not line.startswith("Labels:")] or lines
    first = told[0] if told else ""
    symptom = alert.title if not first or first in alert.title else f"{alert.title}: {first}".strip(": ")
    return clip(" ".join(symptom.split()), 500), clip(" ".join(" ".join(told).split()), 500)


def _plain(item: Claim, briefing: Briefing) -> str:
    text, _ = plain_cited(item.text, len(briefing.evidence))
    return " ".join(text.split())


def _briefing_fields(briefing: Briefing) -> dict[str, str]:
    """What the briefing offers for fields the notes leave empty: its best cause, fix and runbook."""
    found: dict[str, str] = {}
    causes = [_plain(item, briefing) for item in briefing.likely_causes[:1]]
    if causes and causes[0]:
        found["root_cause"] = causes[0]
    fixes = [_plain(item, briefing) for item in briefing.suggested_fix[:MAX_FROM_BRIEFING]]
    if any(fixes):
        found["resolution_steps"] = "\n".join(f"{i}. {fix}" for i, fix in enumerate(filter(None, fixes), 1))
    cited = {
        n for items in (briefing.first_checks, briefing.suggested_fix) for i in items for n in i.citations
    }
    runbooks = [e for e in briefing.evidence if e.kind == "runbook" and e.n in cited]
    if runbooks:
        found["runbook_used"] = runbooks[0].id or runbooks[0].title
    return found


def draft_fields(
    *,
    notes: str,
    alert: AlertInput,
    briefing: Briefing | None,
    notes_n: int,
    briefing_n: int | None,
) -> dict[str, DraftedField]:
    """Each template field with where it came from: notes, then alert, then briefing, else empty."""
    sections, loose = note_sections(notes)
    if loose and "resolution_steps" not in sections:
        sections["resolution_steps"] = loose
    symptom, signature = _alert_fields(alert)
    from_alert = {"symptom": symptom, "error_signature": signature}
    from_briefing = _briefing_fields(briefing) if briefing is not None and briefing_n else {}
    fields: dict[str, DraftedField] = {}
    for name in FIELDS:
        if is_value(sections.get(name, "")):
            fields[name] = DraftedField(sections[name], [notes_n], "notes")
        elif from_alert.get(name):
            fields[name] = DraftedField(from_alert[name], [1], "alert")
        elif from_briefing.get(name) and briefing_n:
            fields[name] = DraftedField(FROM_BRIEFING + from_briefing[name], [briefing_n], "briefing")
        else:
            fields[name] = DraftedField("", [], "none")
    return fields


class EvidenceOnlyDrafter:
    """A deterministic model for the resolution conversation: submit when asked and complete, then answer."""

    name = "evidence-only"
    mode: Mode = "evidence-only"

    def __init__(self, fields: dict[str, DraftedField], *, commit: bool) -> None:
        self.fields = fields
        self.commit = commit

    @property
    def ready(self) -> bool:
        return all(is_value(self.fields[name].text) for name in REQUIRED_FIELDS)

    def _body(self) -> dict[str, str]:
        return {name: field.marked() for name, field in self.fields.items()}

    def _written(self) -> dict[str, str]:
        """What a commit writes: an optional field only the briefing filled (the runbook it cited) is a
        guess nobody confirmed, left empty rather than keeping the whole post-mortem a draft."""
        guessed = {n for n, f in self.fields.items() if f.source == "briefing" and n not in REQUIRED_FIELDS}
        return {name: "" if name in guessed else field.marked() for name, field in self.fields.items()}

    def next_turn(self, view: ConversationView, tools: list[dict[str, Any]] | None) -> ModelTurn:
        """The ``log_incident`` call (its arguments are JSON, as every tool call's are), or the draft
        itself as a value."""
        offered = {tool["function"]["name"] for tool in tools or []}
        tried = any(o.tool == LOG for o in view.outcomes)
        if self.commit and self.ready and LOG in offered and not tried:
            call = ToolCall(id="draft-1", name=LOG, arguments=json.dumps(self._written()))
            return ModelTurn(content=None, tool_calls=[call])
        return ModelTurn(content=None, answer=DraftAnswer(**self._body()))

    async def aclose(self) -> None:
        return None
