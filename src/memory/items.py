"""The items of a record that briefings compare (its steps and failed attempts), and the key their
vectors are stored under.

The briefing head merges near-duplicate checks, fixes and risky moves, and the action guard matches a
proposed move against the recorded ones, both by meaning. Embedding every item of every recalled
record at briefing time was most of a briefing's cost, so the embedded driver embeds a record's items
once, when it is retained, under ``item_key`` of each text; a briefing looks its texts up by the same
key and embeds only what it does not find.
"""

import re

from memory.schema import IncidentRecord

_LIST_ITEM = re.compile(r"\n\s*(?:\d{1,2}[.)]|[-•*])\s+")
_CLAUSE = re.compile(r";\s+|(?<=[.!?])\s+(?=[A-Z])")
_DETAILS = re.compile(r"\s*\([^()]*\)")


def steps(text: str) -> list[str]:
    """A recorded field as separate steps: list items, then semicolons and sentences within them.

    Post-mortems are often hard-wrapped, so a line break ends a step only where a list item starts.
    """
    out: list[str] = []
    for chunk in _LIST_ITEM.sub("\x00", "\n" + (text or "")).split("\x00"):
        for part in _CLAUSE.split(" ".join(chunk.split())):
            part = part.strip(" -•*").rstrip(".")
            if len(part) > 2:
                out.append(part)
    return out


def without_details(text: str) -> str:
    """The text without its parenthesized details: "Raised the pool (to 40)" says "Raised the pool"."""
    return _DETAILS.sub("", text)


def item_key(text: str) -> str:
    """The text as the embedder reads it: the model is uncased and ignores spacing, so two texts with
    the same key have the same vector."""
    return " ".join(text.lower().split())


def record_items(record: IncidentRecord) -> list[str]:
    """The keys of the record's steps and failed attempts, each also without its details."""
    found = [*steps(record.resolution_steps), *steps(record.failed_attempts)]
    keys = dict.fromkeys(item_key(t) for step in found for t in (step, without_details(step)))
    return [k for k in keys if k]
