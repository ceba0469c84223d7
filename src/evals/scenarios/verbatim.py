"""Whether a scenario's alert copies the record it expects to recall, so recall could not fail.

An eval that recalls a record because the alert repeats that record's text measures string matching,
not recall. Two rules, over every string in the alert payload:

- no run of ``SHINGLE`` or more consecutive words (after lower-casing and dropping punctuation) that
  also appears in any field of an expected record;
- not the expected record's whole error signature, as a run of words, anywhere in the alert.

A scenario labelled ``exact-recurrence`` is exempt (the same error string firing again is real), and
those may be at most ``MAX_EXACT_SHARE`` of the scenarios that expect a recalled record.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from evals.scenarios.scenario import RecordIn, Scenario
from memory.template import FIELDS

SHINGLE = 6
EXACT = "exact-recurrence"
MAX_EXACT_SHARE = 0.2
_WORD = re.compile(r"[a-z0-9]+")
# The template's free-text fields, where an alert could copy a record.
RECORD_FIELDS = tuple(field.name for field in FIELDS if field.kind == "text")


@dataclass(frozen=True)
class Copy:
    """One piece of an expected record found verbatim in the alert."""

    scenario: str
    record: str
    kind: str  # "shingle" or "signature"
    words: str


def words(text: str) -> list[str]:
    """The text as lower-case words; punctuation and case never hide a copy."""
    return _WORD.findall(text.lower())


def shingles(tokens: list[str], size: int = SHINGLE) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like payload, keys excluded (label names are not alert text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def copies(scenario: Scenario, expected: Iterable[RecordIn]) -> list[Copy]:
    """Every verbatim copy of an expected record in the scenario's alert (empty when it copies none)."""
    texts = [words(s) for s in strings_in(scenario.alert.payload)]
    alert_shingles = set().union(*(shingles(t) for t in texts)) if texts else set()
    found: list[Copy] = []
    for record in expected:
        record_shingles: set[tuple[str, ...]] = set()
        for name in RECORD_FIELDS:
            record_shingles |= shingles(words(getattr(record, name)))
        for shared in sorted(alert_shingles & record_shingles):
            found.append(Copy(scenario.id, record.incident_id, "shingle", " ".join(shared)))
        signature = words(record.model_dump()["error_signature"])
        if any(_contains_run(text, signature) for text in texts):
            found.append(Copy(scenario.id, record.incident_id, "signature", " ".join(signature)))
    return found


def expected_ids(scenario: Scenario) -> list[str]:
    """The records a scenario expects to see recalled."""
    ids = [scenario.expect.top1] if scenario.expect.top1 else []
    return ids + [i for i in scenario.expect.in_top if i not in ids]


def is_recall(scenario: Scenario) -> bool:
    return bool(expected_ids(scenario))
