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
# A sentence ends at a full stop before a capital, at the comma before a consequence
# (", so the pods ..."), and where a list item starts.
_END = re.compile(
    r"[.!?][\"”’')\]]*(?=\s+[\"“'(\[]?[A-Z0-9]|\s+(?:we|i|it|they|then)\s|\s*$)|,(?=\s+so\s(?!that\b))"
    r"|\n(?=\s*(?:[-*+•]|\d{1,3}[.)])\s)"
)
_TIME = r"\[?\d{1,2}:\d\d(?::\d\d)?(?:\s*[AaPp][Mm])?\]?"
# A chat message's time and speaker: "[14:02] maria:", "jonas 11:02", "14:02 <tom>".
CHAT_PREFIX = re.compile(
    rf"^[ \t]*(?:{_TIME}[ \t]+<?[\w.-]{{1,30}}>?:?|<?[\w.-]{{1,30}}>?[ \t]+{_TIME}:?)(?=[ \t]+\S)[ \t]*",
    re.MULTILINE,
)


def _chat(text: str, span: Span) -> list[Span] | None:
    """A pasted chat thread's messages without their times and speakers, when every line of the
    paragraph is one (at least two): each message is a sentence of its own."""
    lines = [line for line in re.finditer(r"[^\n]+", text[span.start : span.end]) if line.group().strip()]
    prefixes = [CHAT_PREFIX.match(line.group()) for line in lines]
    if len(lines) < 2 or not all(prefixes):
        return None
    found = [
        trimmed(text, Span(span.start + line.start() + prefix.end(), span.start + line.end()))
        for line, prefix in zip(lines, prefixes, strict=True)
        if prefix
    ]
    return [message for message in found if message]


def sentences(text: str, span: Span) -> Iterator[Span]:
    """The sentences of a paragraph (and each list item, each chat message on its own), in order."""
    messages = _chat(text, span)
    if messages is not None:
        for message in messages:
            yield from sentences(text, message)
        return
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


# What did not help: "Restarting the pods did not resolve the issue", "which made it worse", "no change",
# and a team's warning opening a sentence ("Don't restart coredns").
# "No change" of the fault, not "no change made" (a noise incident's "waited; no change made").
NO_CHANGE = r"no (?:change|improvement|effect|difference)\b(?! (?:made|needed|required|was|to)\b)"
FAILED_PHRASES = (
    r"(?:did|does) not (?:fully )?(?:resolve|help|fix|improve|mitigate|restore)",
    r"didn't (?:fully )?(?:resolve|help|fix|improve|mitigate|restore)",
    r"(?:was|were) (?:not|in)effective",
    r"unsuccessful",
    r"made (?:it|things|everything|the (?:problem|issue|situation)) (?:even |much )?worse",
    r"exacerbat",
    r"did not have the (?:expected|intended|desired) effect",
    NO_CHANGE,
    r"(?:did|changed) nothing\b",
)
WARNING = r"^(?:but |so |and )?(?:don't|do not|dont|never)\b"
FAILED = re.compile(_cues(*FAILED_PHRASES).pattern + "|" + WARNING, re.IGNORECASE)

# In the order they are checked: the first that matches gives the sentence its role.
CUE_PHRASES: tuple[tuple[Role, tuple[str, ...]], ...] = (
    (
        "aside",
        (
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
        (
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
    ("failed_attempts", FAILED_PHRASES),
    (
        "root_cause",
        (
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
            r"the reason\b",
            r"happen(?:s|ed)? because",
            r"(?:looks|looked|seems|seemed) like\b",
            r"turn(?:s|ed)? out\b",
            r"actually (?:going on|happening|was)",
            r"pointe?d? (?:at|to) (?:the |an? )?(?:old|wrong|stale|previous|outdated)",
        ),
    ),
    (
        "resolution_steps",
        (
            r"mitigat",
            r"resolv",
            r"restor",
            r"recover",
            r"roll(?:ed|ing)?[ -]?back",
            r"roll(?:ed|ing)? (?:[\w.-]+ ){1,4}back\b",
            r"paus(?:ed|ing)\b",
            r"fix(?:ed)? (?:by|was|is)\b",
            r"re-?creat",
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
        (
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
            r"frozen\b",
            r"tim(?:ed|ing) out\b",
            r"crash-?loop",
            r"(?:was|were|is|are|got|went|became|running) (?:very |really |extremely )?slow\b",
            r"throw(?:ing|s)?\b",
            r"stopped (?:getting|working|receiving|sending|responding)",
            r"not (?:showing|loading|working)",
            r"complain",
        ),
    ),
)
CUES: tuple[tuple[Role, re.Pattern[str]], ...] = tuple(
    (role, FAILED if role == "failed_attempts" else _cues(*phrases)) for role, phrases in CUE_PHRASES
)


def role_of(sentence: str) -> Role | None:
    """The first role whose cues the sentence holds, or None."""
    return next((role for role, cue in CUES if cue.search(sentence)), None)


# The service came back: how a note without follow-ups says it ended ("it cleared within ten minutes",
# "captures going through again", "latency was back to normal in 5 min", "duplicates stopped").
RECOVERED = _cues(
    r"(?:back|returned) to normal",
    r"back (?:up|online|at \d)",
    r"(?:fully )?recovered\b",
    # "it cleared", not "cleared the cache"
    r"cleared(?:\s+(?:up|by|within|after|at|in|on its own)\b|\s*[.,;!]|\s*$)",
    r"(?:caught|catch(?:es)?) up\b",
    r"(?:fixed|resolved|restored) (?:at|by) \d",
    r"drained\b",
    r"(?:going|went|goes|got) through again",
    r"(?:duplicates|errors|alerts|failures|timeouts|\d{3}s) stopped",
    r"stopped the (?:errors|\d{3}s|duplicates|alerts|failures)",
    r"(?:group|cluster|service) settled",
)
