"""The error signature in prose: the short phrases that say how the failure showed.

Status pages rarely head a section with the errors; they say them in passing: "elevated error
rates", "HTTP 503 responses", "increased packet loss", an error message in quotes or in backticks
(whole, though it quotes a file name inside) after what said it ("logged", a team's "the log
says"). Each such phrase is one line of the field, in the order the text first says it, each said
once.
"""

import re

from memory.extraction.model import Span

MAX_PHRASES = 8
# What says a message comes next: the error, what a call returned or logged, and a team's "the log
# says", "logs were full of", "rejected with", "blocked on".
_SAID = (
    r"(?:errors?|returned|receiv\w+|messages?|logged|threw|raised|logs?|says?|said|full of|"
    r"(?:rejected|failed|died|crashed) with|blocked on)"
)
_SIGNS = (
    r"(?:elevated|increased|high|higher|intermittent|significant|severe|degraded|reduced|slow)\s+"
    r"(?:[\w/-]+\s+){0,2}?(?:error\s+rates?|errors?|latenc(?:y|ies)|packet\s+loss|time-?outs?|failures?|"
    r"performance|connectivity|availability|throughput|load|(?:memory|cpu|disk)\s+usage)\b",
    r"\bHTTP\s+[1-5]\d\d(?:\s+(?:errors?|responses?|status(?:\s+codes?)?|error\s+codes?))?",
    r"\b[45]\d\d\s+(?:errors?|responses?|status\s+codes?|error\s+codes?)\b",
    r"\b(?:packet\s+loss|connectivity\s+(?:issues?|problems?|loss)|connection\s+(?:time-?outs?|resets?|failures?|"
    r"errors?|drops?)|DNS\s+resolution\s+(?:errors?|failures?|issues?)|network\s+congestion|(?:service\s+)?"
    r"unavailab(?:le|ility)|time-?outs?)\b",
    rf"\b{_SAID}\b[^.\n`]{{0,40}}?`(?P<b>[^`\n]{{2,200}})`",
    r"`(?P<b2>[^`\n]{2,200})`\s+(?:errors?|exceptions?|messages?|responses?)\b",
    r"(?<=error)s?\s+(?:message\s+)?[\"“](?P<q>[^\"”\n]{2,80})[\"”]",
    rf"\b{_SAID}\b[^.\n]{{0,40}}?[\"“](?P<q2>[^\"”\n]{{2,80}})[\"”]",
    r"[\"“](?P<q3>[^\"”\n]{2,80})[\"”]\s+(?:errors?|exceptions?|messages?|responses?)\b",
)
_QUOTED = ("b", "b2", "q", "q2", "q3")
SIGN = re.compile("|".join(f"(?:{s})" for s in _SIGNS), re.IGNORECASE)


def signature_spans(text: str, within: list[Span]) -> list[Span]:
    """The error phrases inside ``within``, first mention of each, at most ``MAX_PHRASES``."""
    found: dict[str, Span] = {}
    for part in within:
        for match in SIGN.finditer(text, part.start, part.end):
            group = next((name for name in _QUOTED if match.group(name)), None)
            span = Span(match.start(group or 0), match.end(group or 0))
            key = " ".join(text[span.start : span.end].lower().split())
            if key not in found:
                found[key] = span
            if len(found) == MAX_PHRASES:
                return sorted(found.values())
    return sorted(found.values())
