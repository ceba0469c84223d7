"""The team reliability profile: a mental model of recurring failure patterns, and how to read it.

The profile lives in the bank as a mental model named ``PROFILE_NAME`` with ``SOURCE_QUERY``; one more
per service (``service_model_id``), tagged ``service:<name>``. Whoever refreshes it (Hindsight's own
reflection, the embedded driver's LLM synthesizer or the offline one in ``memory.patterns``) is asked
for the same structure, which ``Pattern`` holds:

    pattern: what failed and why, seen in N incidents (uncertain when N == 1)
      services, dependencies, early warning signals, recorded root causes, mitigations that worked,
      risky actions to avoid, first checks, runbooks -- every item cites the incidents it came from

Reading it back (``load_patterns``): the structured form when the bank kept one (``{"patterns": [...]}``),
else a JSON object found in the text, else no patterns and the text is shown as it is.

For briefings (the agent): ``matching_patterns(patterns, alert_text=..., service=...)`` returns the
patterns that resemble an alert, best first, as ``PatternMatch(pattern, score, matched_terms)``;
``pattern_evidence_text(pattern)`` is the compact text to put in the evidence list (risky actions and
first checks first), citing the pattern's incidents by id.
"""

import math
import re
import textwrap
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from memory.bank import MentalModel
from memory.schema import service_tag
from memory.text import json_object, tokens

PROFILE_ID = "team-reliability-profile"
PROFILE_NAME = "Team-wide Production Reliability Profile"
SOURCE_QUERY = (
    "Build the team's production reliability profile from the resolved incidents and their corrections. "
    "For each recurring failure pattern (grouped by what failed and why: the error signature and the "
    "root cause, not by service name) give: the services and dependencies involved, early warning "
    "signals, recorded root causes, mitigations that worked, risky actions to avoid, first checks, and the "
    "runbook. Count separately, as noise, the incidents that self-recovered or were false alarms "
    "(resolution kind), so a pattern of alerts that clear on their own is not mistaken for a failure. "
    "Put repeated, high-severity and cross-service patterns first. Cite the incident ids "
    "behind every item. Prefer the most recent correction over the original record. Label uncertain "
    "evidence as uncertain, including any pattern seen in only one incident; never invent an incident."
)
PATTERN_FIELDS = (
    "services",
    "dependencies",
    "early_warning_signals",
    "recorded_root_causes",
    "mitigations_that_worked",
    "risky_actions",
    "first_checks",
    "runbooks",
)
FIELD_LABELS = {
    "services": "Services",
    "dependencies": "Dependencies",
    "early_warning_signals": "Early warning signals",
    "recorded_root_causes": "Recorded root causes",
    "mitigations_that_worked": "Mitigations that worked",
    "risky_actions": "Risky actions to avoid",
    "first_checks": "First checks",
    "runbooks": "Runbook",
}
# Profiles stored before the rename keep their old keys until the next refresh rewrites them.
RENAMED_FIELDS = {
    "verified_root_causes": "recorded_root_causes",
    "safe_mitigations": "mitigations_that_worked",
}

PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["patterns"],
    "properties": {
        "patterns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["title", "incidents", "uncertain", *PATTERN_FIELDS],
                "properties": {
                    "title": {"type": "string"},
                    "incidents": {"type": "array", "items": {"type": "string"}},
                    "noise_incidents": {"type": "array", "items": {"type": "string"}},
                    "uncertain": {"type": "boolean"},
                    "severity": {"type": "string"},
                    **{
                        name: {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["text", "citations"],
                                "properties": {
                                    "text": {"type": "string"},
                                    "citations": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                        }
                        for name in PATTERN_FIELDS
                    },
                },
            },
        }
    },
}


@dataclass(frozen=True)
class PatternItem:
    """One statement about a pattern, with the incident (or correction) ids it rests on."""

    text: str
    citations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Pattern:
    id: str
    title: str
    incidents: list[str]
    uncertain: bool
    severity: str = ""
    # The incidents of ``incidents`` that needed no fix (self-recovered, false alarm): noise, not failures.
    noise_incidents: list[str] = field(default_factory=list)
    last_seen: datetime | None = None
    seen: list[datetime] = field(default_factory=list)  # each incident's date, oldest first, when known
    error_signatures: list[str] = field(default_factory=list)  # what the alerts said: matched, not shown
    services: list[PatternItem] = field(default_factory=list)
    dependencies: list[PatternItem] = field(default_factory=list)
    early_warning_signals: list[PatternItem] = field(default_factory=list)
    recorded_root_causes: list[PatternItem] = field(default_factory=list)
    mitigations_that_worked: list[PatternItem] = field(default_factory=list)
    risky_actions: list[PatternItem] = field(default_factory=list)
    first_checks: list[PatternItem] = field(default_factory=list)
    runbooks: list[PatternItem] = field(default_factory=list)

    @property
    def occurrences(self) -> int:
        return len(self.incidents)

    @property
    def failures(self) -> int:
        """Incidents of this pattern that were real failures, noise left out."""
        return len(self.incidents) - len(self.noise_incidents)

    @property
    def service_names(self) -> list[str]:
        return [item.text for item in self.services]

    @property
    def cross_service(self) -> bool:
        return len(self.services) > 1

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["last_seen"] = self.last_seen.isoformat() if self.last_seen else None
        data["seen"] = [moment.isoformat() for moment in self.seen]
        data["occurrences"] = self.occurrences
        data["failures"] = self.failures
        data["cross_service"] = self.cross_service
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, index: int = 0) -> "Pattern":
        """Lenient on purpose: an LLM-written profile may omit fields or give plain strings."""
        incidents = [str(i) for i in data.get("incidents") or []]
        old = {new: data.get(legacy) for legacy, new in RENAMED_FIELDS.items()}
        items = {name: _items(data.get(name) or old.get(name)) for name in PATTERN_FIELDS}
        if not incidents:
            incidents = sorted({c for values in items.values() for item in values for c in item.citations})
        last_seen = data.get("last_seen")
        return cls(
            id=str(data.get("id") or f"pattern-{index + 1}"),
            title=str(data.get("title") or data.get("name") or f"Pattern {index + 1}"),
            incidents=incidents,
            uncertain=bool(data.get("uncertain", len(incidents) <= 1)),
            severity=str(data.get("severity") or ""),
            noise_incidents=[str(i) for i in data.get("noise_incidents") or [] if str(i) in incidents],
            last_seen=datetime.fromisoformat(last_seen) if isinstance(last_seen, str) else None,
            seen=_dates(data.get("seen")),
            error_signatures=[str(s) for s in data.get("error_signatures") or [] if isinstance(s, str)],
            **items,
        )


@dataclass(frozen=True)
class PatternMatch:
    pattern: Pattern
    score: float
    matched_terms: list[str]


def _dates(raw: object) -> list[datetime]:
    """ISO timestamps, aware ones only (a written profile may carry none, or junk)."""
    found: list[datetime] = []
    for value in raw if isinstance(raw, list) else []:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            continue
        if moment.tzinfo is not None:
            found.append(moment)
    return sorted(found)


def service_model_id(service: str) -> str:
    return f"{PROFILE_ID}--{re.sub(r'[^A-Za-z0-9._-]+', '-', service)}"


def service_model_name(service: str) -> str:
    return f"{PROFILE_NAME} — {service}"


def service_model_tags(service: str) -> list[str]:
    return [service_tag(service)]


def profile_structured(patterns: list[Pattern]) -> dict[str, Any]:
    return {"patterns": [p.to_dict() for p in patterns]}


def load_patterns(model: MentalModel | None) -> list[Pattern]:
    """The model's patterns: structured when kept, else a JSON object in its text, else none."""
    if model is None:
        return []
    if isinstance(model.structured, dict):
        return _patterns_from(model.structured)
    return parse_patterns(model.content)


def parse_patterns(text: str) -> list[Pattern]:
    """Patterns from a profile-shaped JSON object found in free text (an LLM's answer, Hindsight's)."""
    return _patterns_from(_json_in(text))


def _patterns_from(data: dict[str, Any] | None) -> list[Pattern]:
    raw = data.get("patterns") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return []
    return [Pattern.from_dict(p, index=i) for i, p in enumerate(raw) if isinstance(p, dict)]


ITEM_HANG = " " * len("   - ")  # an item's continuation lines start under its text


def render_profile(patterns: list[Pattern], *, heading: str = PROFILE_NAME) -> str:
    """Plain text for people and for LLM context; every item keeps its citations."""
    if not patterns:
        return f"{heading}\n\nNo resolved incidents in memory yet: no failure pattern is known."
    blocks = [heading]
    for number, pattern in enumerate(patterns, 1):
        blocks.append(f"{number}. {pattern.title}\n   {_describe(pattern)}")
        for name in PATTERN_FIELDS:
            values = getattr(pattern, name)
            if values:
                lines = "\n".join(f"   - {_under(item.text)}{_cite(item.citations)}" for item in values)
                blocks[-1] += f"\n   {FIELD_LABELS[name]}:\n{lines}"
    return "\n\n".join(blocks)


def _under(text: str) -> str:
    """An item's text whose own line breaks (a record's symptom written over several lines) stay under
    its bullet: at column 0 they read as the next pattern's lines, not as the rest of this item."""
    return textwrap.indent(text.strip(), ITEM_HANG).removeprefix(ITEM_HANG)


def pattern_evidence_text(pattern: Pattern, *, max_items: int = 3) -> str:
    """What a briefing shows for a matched pattern: what to avoid and check first, then the rest."""
    order = ("risky_actions", "first_checks", "recorded_root_causes", "mitigations_that_worked", "runbooks")
    lines = [f"PATTERN {pattern.id} — {pattern.title} ({_describe(pattern)})"]
    for name in order:
        for item in getattr(pattern, name)[:max_items]:
            lines.append(f"{FIELD_LABELS[name]}: {item.text}{_cite(item.citations)}")
    return "\n".join(lines)


def matching_patterns(
    patterns: list[Pattern],
    *,
    alert_text: str,
    service: str | None = None,
    limit: int = 3,
    min_score: float = 0.2,
) -> list[PatternMatch]:
    """Patterns resembling an alert, best first.

    Score: the idf-weighted share of the alert's content words found in what the pattern says failed
    (title, error signatures, signals, root causes), so a rare shared word ("idle-in-transaction")
    counts more than a common one ("error"); a pattern already seen on the alert's own service gets a
    small bonus.
    """
    alert = tokens(alert_text)
    if not alert or not patterns:
        return []
    vocab = [tokens(_pattern_text(p)) for p in patterns]
    df: dict[str, int] = {}
    for words in vocab:
        for word in words:
            df[word] = df.get(word, 0) + 1
    idf = {word: math.log(1 + len(patterns) / df.get(word, 0.5)) for word in alert}
    total = sum(idf.values())
    matches = []
    for pattern, words in zip(patterns, vocab, strict=True):
        shared = alert & words
        score = sum(idf[w] for w in shared) / total
        if service and service in pattern.service_names:
            score += 0.1
        if shared and score >= min_score:
            matches.append(PatternMatch(pattern=pattern, score=round(score, 4), matched_terms=sorted(shared)))
    matches.sort(key=lambda m: (-m.score, -m.pattern.occurrences, m.pattern.id))
    return matches[:limit]


def _pattern_text(pattern: Pattern) -> str:
    parts: Iterable[PatternItem] = [
        *pattern.early_warning_signals,
        *pattern.recorded_root_causes,
        *pattern.first_checks,
    ]
    return "\n".join([pattern.title, *pattern.error_signatures, *(item.text for item in parts)])


def _describe(pattern: Pattern) -> str:
    label = "uncertain: seen once" if pattern.uncertain else f"recurring: {pattern.occurrences} incidents"
    extras = [label]
    if pattern.noise_incidents:
        extras.append(
            f"{pattern.failures} real failure{'s' if pattern.failures != 1 else ''}, "
            f"{len(pattern.noise_incidents)} noise (self-recovered or false alarm)"
        )
    if pattern.cross_service:
        extras.append(f"{len(pattern.services)} services")
    if pattern.severity:
        extras.append(f"highest severity {pattern.severity}")
    return "; ".join(extras) + _cite(pattern.incidents)


def _cite(citations: list[str]) -> str:
    return f" [{', '.join(citations)}]" if citations else ""


def _items(value: Any) -> list[PatternItem]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    items = []
    for entry in values:
        if isinstance(entry, dict) and entry.get("text"):
            items.append(
                PatternItem(text=str(entry["text"]), citations=[str(c) for c in entry.get("citations") or []])
            )
        elif isinstance(entry, str) and entry.strip():
            items.append(PatternItem(text=entry.strip()))
    return items


def _json_in(text: str) -> dict[str, Any] | None:
    """A JSON object in free text (an LLM may wrap it in prose or a code fence), or None."""
    try:
        return json_object(text)
    except ValueError:
        return None
