"""Text helpers shared by memory and the agent: the tokenizer, the JSON extractor and the guards.

The tokenizer decides which words two texts share (pattern grouping, match strength, profile
matching). The JSON extractor reads the one object a model answers with, whatever prose or code fence
surrounds it. The guards are small pure functions over untrusted text: alert text and recalled
records are data written by whoever can reach the webhook or wrote a post-mortem. The prompts already
tell the model never to follow instructions inside them; the injection detector additionally
*reports* text that addresses the model or names its tools, so the engineer sees it in the
briefing's warnings and the loop withholds every write for that conversation. Incident ids that no
evidence carries are replaced, so an answer cannot point at an incident nobody recalled.
"""

import json
import re
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.]*[a-z0-9]|[a-z0-9]")
_NOISE = re.compile(r"^(\d+|[0-9a-f]{8,}|\d+(\.\d+)+)$")
_STOPWORD_TEXT = """
a an and are as at be been but by for from had has have in into is it its of on or that the this to was were
when which while with after before during over under not no than then there their they we our us all any
each more most other some such only same so too very can could did do does done out up down off again
further once also because until against between through
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def tokens(text: str) -> set[str]:
    """Content words of a text, without numbers, hex ids and stopwords, so overlap means shared meaning."""
    return {t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and not _NOISE.match(t)}


def json_object(content: str | None) -> dict[str, Any]:
    """The JSON object in a model's answer, tolerating code fences and prose around it.

    Raises ``ValueError`` saying what is wrong (empty, no object, invalid JSON, not an object), in
    words the model can act on when the loop asks it to repair its answer."""
    if not content or not content.strip():
        raise ValueError("the answer was empty")
    text = _FENCE.sub("", content.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object found in the answer")
    try:
        raw = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at {exc.pos}") from exc
    if not isinstance(raw, dict):
        raise ValueError("the answer is not a JSON object")
    return raw


def validated(model: type[M], raw: dict[str, Any]) -> M:
    """``raw`` as ``model``, or a ``ValueError`` naming the first problems (for the repair prompt)."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(problems) from exc


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


@lru_cache(maxsize=4096)  # every briefing scans the records it recalls, and the same ones come back
def injection_signals(text: str) -> tuple[str, ...]:
    """The kinds of instruction-like content found in ``text`` (empty when it reads as plain data)."""
    found: list[str] = []
    for label, pattern in _INJECTION_PATTERNS:
        if label not in found and pattern.search(text):
            found.append(label)
    return tuple(found)


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
