"""Does the evidence support a drafted post-mortem field? The guard in front of a committed write.

A resolution conversation may store the post-mortem on the engineer's behalf only when every field
the model proposes stands on something: a citation of the engineer's notes or of a record (the
alert, the incident timeline, a recalled incident or runbook), and words of the field found in what
it cites. Generated text (the earlier briefing, a synthesis, the profile) does not count: it is the
model's own kind of output. A field that fails is returned for the engineer to confirm instead.
"""

import re
from collections.abc import Mapping, Sequence

from agent.core.claims import Grounds, steps
from agent.core.evidence import Evidence
from agent.core.guard import guard
from agent.core.schema import Claim, ClaimCheck, EvidenceItem
from agent.core.similarity import Similarity

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


# What people write in a field when they have nothing to put there: not a value.
_PLACEHOLDER = re.compile(
    r"(?:n/?a|none|unknown|not (?:provided|known|specified|available|applicable|given|recorded)|"
    r"no (?:information|info|data)|tbd|todo|to be determined|\?+|-+|—|\.+)",
    re.IGNORECASE,
)


def is_value(text: str) -> bool:
    """Whether a field holds something: not empty, and not a stand-in such as "not provided" or "n/a"."""
    return bool(text.strip()) and not _PLACEHOLDER.fullmatch(text.strip().strip(".:;!").strip())


_FAILED = frozenset({"failed_attempt", "risky_action"})


def fix_not_in_role(
    resolution_steps: str, citations: Sequence[int], evidence: Evidence, similarity: Similarity
) -> bool:
    """Whether a drafted fix that does not cite the engineer's notes proposes a step that the records it
    cites say failed or made things worse: each step goes through the claim guard as a briefing's fix
    does (``agent.core.guard``), with the briefing's similarity (stems and, with an embedder, meaning),
    so a paraphrase of a failed attempt is caught the same way in both."""
    kinds = {item.n: item.kind for item in evidence.items}
    if not resolution_steps.strip() or any(kinds.get(n) == "notes" for n in citations):
        return False
    claims = [
        Claim(text=step, statement=step, citations=list(citations), role="fix")
        for step in steps(resolution_steps)
    ]
    report = ClaimCheck()
    guard(claims, Grounds(evidence), similarity, report)
    return any(r.reason == "other role" and r.field in _FAILED for r in report.removed)


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
