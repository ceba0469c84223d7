"""The lines of a record or runbook that briefings and the action guard compare (a record's steps and
failed attempts, a runbook's checks, mitigations and risky actions), and the key their vectors are
stored under.

The briefing head merges near-duplicate checks, fixes and risky moves, and the action guard matches a
proposed move against the recorded ones, both by meaning. Embedding those lines at briefing time was
most of a briefing's cost, so the embedded driver embeds a document's items once, when it is retained,
under ``item_key`` of each form a comparison reads a line in (as written, without its closing period,
without its parenthesized details, without its consequence); a briefing looks its texts up by the same
key and embeds only what it does not find.
"""

import re
from collections.abc import Iterable

from memory import runbooks
from memory.extraction.prose import FAILED, NO_CHANGE
from memory.schema import IncidentRecord, RecordFormatError, parse_record

# What a document's items are, by version: items stored under an earlier version are stored again.
ITEMS_VERSION = 7

_LIST_ITEM = re.compile(r"\n\s*(?:\d{1,2}[.)]|[-•*])\s+")
_CLAUSE = re.compile(r";\s+|(?<=[.!?])\s+(?=[A-Z])")
# A sentence or clause opening with these words is about the one before it.
_BACK_WORDS = r"(?:it|this|that|these|those|which)\b"
_BACK = re.compile(_BACK_WORDS, re.IGNORECASE)
_DETAILS = re.compile(r"\s*\([^()]*\)")
_NO_CHANGE = rf"\b{NO_CHANGE}"
# A clause about the system, not a move of the team's: its subject is a thing ("the pool", "pods", "p99
# latency"), not "we" or a verb, and its verb says the state changed, with no object ("pods restarted",
# not "the team restarted the pods"; "came back", "was built").
_WORD = r"(?!(?:the|a|an|to|of|in|on|at|for|with|from|by)\b)[\w%/-]+"
_THING = rf"{_WORD}(?: {_WORD})?"
_SYSTEM = rf"(?!(?:we|they|i|you|and|then|also)\b)(?:(?:the|all|every|each) )?{_THING}(?: and {_THING})?"
_STATE_CHANGE = (
    r"(?:was |were |is |are |got )?(?:dropped|recovered|returned|cleared|stopped|fell|went down|restarted|"
    r"came back|drained|caught up|settled|stabili[sz]ed|resumed|subsided|built|finished|back to normal)\b"
    r"(?! (?:the|a|an|all|every|each|its|their|our|it|them)\b)"
)
_EFFECT = rf"{_SYSTEM} {_STATE_CHANGE}"
_THEN = r"(?:and|then|as|so|once|until|after which|when)"
# Where a recorded line stops saying what was done and starts saying what it did: a colon, a clause about
# the line before it, a consequence ("made it worse", "which did not help") or an effect, after a stop, a
# comma or a joining word ("; the pool recovered", " as pods restarted", ", then latency returned").
_CONSEQUENCE = re.compile(
    rf":\s+|[.;]\s+(?={_BACK_WORDS})|\s+(?=(?:made|caused|did not|didn't|only|which|so that)\b)"
    rf"|(?:[.;,]\s+(?:{_THEN}\s+)*|\s+(?:{_THEN}\s+)+)(?={_EFFECT})",
    re.IGNORECASE,
)
_OPENS_WITH_EFFECT = re.compile(_EFFECT, re.IGNORECASE)
# What a clause says when the fault went on after a move: "504s continue", "errors persisted", "writes
# kept failing", "no change".
_GOES_ON = (
    r"\b(?!(?:we|they|i|and|then)\b)[\w%/-]+ (?:continued?|persist(?:ed)?|remained|"
    r"kept (?:climbing|rising|growing|failing|erroring|crashing|timing out))\b(?! to\b)"
)
# A clause that says what came of the move before it, either way ("504s continue", "errors dropped").
_RESULT = re.compile(rf"^(?:{_NO_CHANGE}|still\b|unchanged\b|{_GOES_ON}|{_EFFECT})", re.IGNORECASE)
# What a step says of itself when it did not help, besides what the extractor reads in prose as a failed
# attempt ("made it worse"): in a list of moves, "429s got worse" can only be about the move.
_WORSE = re.compile(
    r"\b(?:(?:got|went|grew|became) worse|worsened|changed nothing|(?:had|made) no (?:effect|difference)"
    r"|(?:^|[;,]\s*)still (?:fail|erro|high|down|tim|slow)\w*)\b|" + _NO_CHANGE + "|" + _GOES_ON,
    re.IGNORECASE,
)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_NOTICE = re.compile(
    r"\b(?:alerts? (?:fired|triggered|went off|came in)|alerted|paged|ack(?:ed|nowledged)|escalated|"
    r"(?:declared (?:an? )?|incident )(?:incident|sev ?\d|outage|declared)|"
    r"joined the (?:call|bridge|channel))\b",
    re.IGNORECASE,
)
MAX_NOTICE_WORDS = 6


def steps(text: str) -> list[str]:
    """A recorded field as separate steps: list items, then semicolons and sentences within them.

    Post-mortems are often hard-wrapped, so a line break ends a step only where a list item starts. A
    sentence that speaks of the one before it ("It did not help.") stays with it, and so does a clause
    that says what came of it ("restarted the pods; 504s continue"): alone, a briefing would list "It
    did not help" or "504s continue" as a move, with nothing to say what was done.
    """
    out: list[str] = []
    for chunk in _LIST_ITEM.sub("\x00", "\n" + (text or "")).split("\x00"):
        parts: list[str] = []
        for part in _CLAUSE.split(" ".join(chunk.split())):
            part = part.strip(" -•*").rstrip(".")
            if len(part) <= 2:
                continue
            if parts and (_BACK.match(part) or _RESULT.match(part)):
                parts[-1] += (". " if part[0].isupper() else "; ") + part
            else:
                parts.append(part)
        out += parts
    return out


def failed(step: str) -> bool:
    """A recorded move that says it did not help: "Restarted the pods, which did not help"."""
    return bool(FAILED.search(step) or _WORSE.search(step))


def notice(step: str) -> bool:
    """A timeline line that only says how the team heard of it ("14:20 alert fired", "14:23 acked by
    oncall"): neither a check nor a fix."""
    words = [w for w in _TIME.sub(" ", step).split() if any(c.isalpha() for c in w)]
    return len(words) <= MAX_NOTICE_WORDS and bool(_NOTICE.search(step))


def worked_steps(record: IncidentRecord) -> list[str]:
    """The record's resolution steps that did what they were for: a step that says it did not help is
    one of its failed attempts, and a notice is no move at all; neither is a check or a fix to offer."""
    return [step for step in steps(record.resolution_steps) if not failed(step) and not notice(step)]


def failed_steps(record: IncidentRecord) -> list[str]:
    """The record's failed attempts, then the resolution steps that say they did not help."""
    return [*steps(record.failed_attempts), *filter(failed, steps(record.resolution_steps))]


def without_details(text: str) -> str:
    """The text without its parenthesized details: "Raised the pool (to 40)" says "Raised the pool"."""
    return _DETAILS.sub("", text)


def item_key(text: str) -> str:
    """The text as the embedder reads it: the model is uncased and ignores spacing, so two texts with
    the same key have the same vector."""
    return " ".join(text.lower().split())


def done_part(text: str) -> str:
    """ "Scaling X first made it worse: each pod ..." -> "Scaling X first": the move, not its effect.

    An effect is a clause whose subject is the system and whose verb says its state changed: "Rolled back
    the deploy; the pool recovered as pods restarted" did "Rolled back the deploy", and the pods
    restarting is what that did, not a move anyone made. A line that opens with one ("Pods restarted",
    "errors and retries fell") is kept whole: terse notes write moves that way too.
    """
    if _OPENS_WITH_EFFECT.match(text):
        return text
    return _CONSEQUENCE.split(text, maxsplit=1)[0]


def line_keys(lines: Iterable[str]) -> list[str]:
    """The keys of recorded lines in every form a comparison reads them in, each once."""
    keys: dict[str, None] = {}
    for line in lines:
        key = item_key(line)
        bare = key.rstrip(".")
        for form in (key, bare, item_key(without_details(bare)), item_key(done_part(line))):
            if form:
                keys.setdefault(form)
    return list(keys)


def record_items(record: IncidentRecord) -> list[str]:
    """The keys of the record's steps and failed attempts."""
    return line_keys([*worked_steps(record), *failed_steps(record)])


def runbook_items(text: str) -> list[str]:
    """The keys of a runbook's first checks, mitigations and risky actions."""
    found = runbooks.sections(text)
    return line_keys(
        [*found.get("first checks", []), *runbooks.mitigations(text), *found.get("risky actions", [])]
    )


def document_items(content: str) -> list[str]:
    """The item keys of a stored text: a labeled record's or a runbook's; none for anything else."""
    if runbooks.is_runbook(content):
        return runbook_items(content)
    try:
        return record_items(parse_record(content))
    except RecordFormatError:
        return []
