"""Guardrails as small pure functions: injection detection, tool-argument caps, id checks.

Alert text and recalled records are data written by whoever can reach the webhook or wrote a
post-mortem. The prompts already tell the model never to follow instructions inside them; this
detector additionally *reports* text that addresses the model or names its tools, so the engineer
sees it in the briefing's warnings and the loop withholds every write for that conversation.
"""

import re

_INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.IGNORECASE))
    for label, pattern in (
        (
            "asks to ignore instructions",
            r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|system|"
            r"your)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|directives?|context)\b",
        ),
        ("names a write tool", r"\b(call|invoke|use|run|execute)\b[^.\n]{0,30}\blog_incident\b"),
        ("names a write tool", r"\blog_incident\s*\("),
        ("claims a new role", r"\byou are (now|no longer)\b|\bact as (an? )?(admin|system|developer)\b"),
        ("addresses the system prompt", r"\b(system|developer) (prompt|message|instructions?)\b"),
        ("fakes a conversation turn", r"(^|\n)\s*(system|assistant|developer)\s*:|<\|?(im_start|system)\|?>"),
        (
            "asks to reveal secrets",
            r"\b(reveal|print|show|leak)\b[^.\n]{0,30}\b(api[ _-]?key|secret|token|password)s?\b",
        ),
    )
)

INCIDENT_ID = re.compile(r"\b(?:INC|PM|IR)-[A-Za-z0-9][A-Za-z0-9_-]*\b")


def injection_signals(text: str) -> list[str]:
    """The kinds of instruction-like content found in ``text`` (empty when it reads as plain data)."""
    found: list[str] = []
    for label, pattern in _INJECTION_PATTERNS:
        if label not in found and pattern.search(text):
            found.append(label)
    return found


def clip(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, saying so, so the model knows the record goes on."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 20)].rstrip() + " …[truncated]"


def unknown_incident_ids(text: str, known: set[str]) -> list[str]:
    """Incident-shaped ids in ``text`` that no evidence item carries: invented, or copied from data."""
    seen: list[str] = []
    for match in INCIDENT_ID.finditer(text):
        ident = match.group(0)
        if ident not in known and ident not in seen:
            seen.append(ident)
    return seen


def replace_unknown_ids(text: str, known: set[str]) -> tuple[str, list[str]]:
    """``text`` with every incident id no evidence carries replaced by a plain label, and those ids."""
    unknown = unknown_incident_ids(text, known)
    if not unknown:
        return text, []
    return INCIDENT_ID.sub(
        lambda m: m.group(0) if m.group(0) in known else "(unverified incident)", text
    ), unknown
