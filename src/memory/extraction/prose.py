"""Sentence roles in prose without headings: what each sentence of a status-page write-up is about.

A sentence's role comes from the cue phrases it holds ("The root cause was ...", "Engineers mitigated
the issue by ...", "Customers experienced ..."), checked in a fixed order so that a sentence has one
role: an aside (apologies, thanks, promises of the next update: nobody's field), prevention and
follow-ups (the outcome), what did not help (failed attempts), the cause, what was done (resolution
steps), what was seen (symptom).
"""

import re
from collections.abc import Iterator
from typing import Literal

from memory.extraction.headings import trimmed
from memory.extraction.model import Span

Role = Literal["aside", "outcome", "failed_attempts", "root_cause", "resolution_steps", "symptom"]

_ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|inc|no|mr|ms|dr|st|a\.m|p\.m|u\.s)|\b[A-Z])\.$", re.I
)
_MARKER = re.compile(r"\s*\d{1,3}\.$")  # "1." opening a numbered item is no sentence
_END = re.compile(r"[.!?][\"”’')\]]*(?=\s+[\"“'(\[]?[A-Z0-9]|\s*$)|\n(?=\s*(?:[-*+•]|\d{1,3}[.)])\s)")


def sentences(text: str, span: Span) -> Iterator[Span]:
    """The sentences of a paragraph (and each list item on its own), in order."""
    start = span.start
    piece = text[span.start : span.end]
    for end in _END.finditer(piece):
        stop = span.start + end.end()
        if end.group().startswith(".") and (
            _ABBREVIATIONS.search(text[max(start, stop - 12) : stop]) or _MARKER.match(text[start:stop])
        ):
            continue
        found = trimmed(text, Span(start, stop))
        if found:
            yield found
        start = stop
    last = trimmed(text, Span(start, span.end))
    if last:
        yield last


def _cues(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")", re.IGNORECASE)


# What did not help: "Restarting the pods did not resolve the issue", "which made it worse".
FAILED = _cues(
    r"(?:did|does) not (?:fully )?(?:resolve|help|fix|improve|mitigate|restore)",
    r"didn't (?:fully )?(?:resolve|help|fix|improve|mitigate|restore)",
    r"(?:was|were) (?:not|in)effective",
    r"unsuccessful",
    r"made (?:it|things|the (?:problem|issue|situation)) worse",
    r"exacerbat",
    r"did not have the (?:expected|intended|desired) effect",
)

# In the order they are checked: the first that matches gives the sentence its role.
CUES: tuple[tuple[Role, re.Pattern[str]], ...] = (
    (
        "aside",
        _cues(
            r"apologi[sz]",
            r"we (?:sincerely )?regret",
            r"sorry",
            r"thank you",
            r"we understand how",
            r"(?:provide|post|share) (?:an? )?(?:more|further|additional|next)? ?"
            r"(?:information|update|details|analysis)",
            r"next update",
            r"(?:want|like) to (?:share|provide|give)",
        ),
    ),
    (
        "outcome",
        _cues(
            r"we will\b",
            r"we(?:'| a)re (?:working|making|adding|implementing|improving|changing|updating|developing|"
            r"taking|reviewing|investigating ways|putting|deploying additional)",
            r"(?:to )?prevent (?:a |this |similar |further |future )?"
            r"(?:recurrence|re-occurrence|incidents?|issues?)",
            r"going forward",
            r"in the future",
            r"follow-?up",
            r"action items?",
            r"we plan to",
            r"will be (?:adding|implementing|improving|making|changing|deploying)",
        ),
    ),
    ("failed_attempts", FAILED),
    (
        "root_cause",
        _cues(
            r"root cause",
            r"(?:was|were|is|been) (?:ultimately |primarily |initially )?(?:caused|triggered) by",
            r"the (?:trigger|cause) (?:of|for|was)",
            r"(?:was|were) the result of",
            r"(?:resulted|stemmed|arose) from",
            r"due to an? ",
            r"because (?:of )?an? ",
            r"bug",
            r"misconfigur",
            r"incorrect(?:ly)?\b",
            r"inadvertent",
            r"unintended",
            r"unexpected(?:ly)?\b",
            r"latent",
            r"defect",
        ),
    ),
    (
        "resolution_steps",
        _cues(
            r"mitigat",
            r"resolv",
            r"restor",
            r"recover",
            r"roll(?:ed)?[ -]?back",
            r"revert",
            r"restart",
            r"reboot",
            r"fail(?:ed)?[ -]?over",
            r"redirect",
            r"drain",
            r"added (?:additional )?capacity",
            r"increased (?:the )?capacity",
            r"throttl",
            r"disabled",
            r"re-?enabled",
            r"(?:deployed|applied|rolled out) (?:a |the )?fix",
            r"workaround",
            r"manually",
            r"isolat",
            r"(?:returned|back) to normal",
        ),
    ),
    (
        "symptom",
        _cues(
            r"(?:customers|users|clients|applications|requests|projects) (?:\w+ ){0,2}"
            r"(?:experienced|saw|observed|were unable|could not|received|encountered|failed)",
            r"experienced (?:elevated|increased|high|intermittent|degraded)",
            r"error rates?",
            r"\blatenc",
            r"unavailab",
            r"unable to",
            r"outage",
            r"disruption",
            r"degrad",
            r"impact",
        ),
    ),
)


def role_of(sentence: str) -> Role | None:
    """The first role whose cues the sentence holds, or None."""
    return next((role for role, cue in CUES if cue.search(sentence)), None)
