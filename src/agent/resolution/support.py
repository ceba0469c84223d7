"""Does the evidence support a drafted post-mortem field? The guard in front of a committed write.

A resolution conversation may store the post-mortem on the engineer's behalf only when every field
the model proposes stands on something: a citation of the engineer's notes or of a record (the
alert, the incident timeline, a recalled incident or runbook), and words of the field found in what
it cites. Generated text (the earlier briefing, a synthesis, the profile) does not count: it is the
model's own kind of output. A field that fails is returned for the engineer to confirm instead.
"""

import re
from collections.abc import Mapping, Sequence

from agent.core.schema import EvidenceItem

SUPPORTING_KINDS = frozenset({"notes", "alert", "timeline", "incident", "runbook"})
MIN_SHARED = 0.34  # of the field's distinct content words, at least this share must appear in its sources
_WORD = re.compile(r"[a-z0-9][a-z0-9_.:/-]{2,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "was",
        "were",
        "are",
        "has",
        "had",
        "have",
        "not",
        "but",
        "into",
        "then",
        "than",
        "after",
        "before",
        "when",
        "which",
        "while",
        "also",
        "its",
        "our",
        "their",
        "there",
        "what",
        "over",
        "under",
        "about",
        "again",
        "more",
        "most",
        "some",
        "such",
    ]
)


def _words(text: str) -> set[str]:
    return {w.strip(".:/-") for w in _WORD.findall(text.lower())} - _STOP - {""}


def unsupported_fields(
    fields: Mapping[str, str], citations: Mapping[str, Sequence[int]], evidence: Sequence[EvidenceItem]
) -> list[str]:
    """The non-empty fields that cite no supporting evidence, or share too few words with it."""
    by_n = {item.n: item for item in evidence}
    unsupported = []
    for name, text in fields.items():
        if not text.strip():
            continue
        sources = [by_n[n] for n in citations.get(name, ()) if n in by_n and by_n[n].kind in SUPPORTING_KINDS]
        words = _words(text)
        if not sources:
            unsupported.append(name)
            continue
        if not words:
            continue
        seen = set().union(*(_words(item.text) | _words(item.title) for item in sources))
        if len(words & seen) < MIN_SHARED * len(words):
            unsupported.append(name)
    return unsupported
