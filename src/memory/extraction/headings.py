"""Sections under headings: where a post-mortem says which part is the root cause, believe it.

A heading is a Markdown heading (``#`` or underlined), a bold line, an upper-case line, a short line
ending in a colon, a short line standing alone between blank lines, or a known label opening a line
(``Root cause: ...``). It names a template field when it holds one of the words the template's field
list gives that field (``memory.template``: the name, the label and the aliases), with few other
words around them; other headings only close the section before them, as does a table row. A short
line alone right under a heading that names a field is that field's value (``## Outcome``, then
``Fixed``), not a heading of its own that would leave the field empty.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memory.extraction.model import Span
from memory.template import FIELDS

_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<h>.+?)[ \t#]*$")
_SETEXT_RULE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_BOLD = re.compile(r"^\s*(\*\*|__)(?P<h>[^*_\n]+?)\1\s*:?\s*$")
_LABEL = re.compile(r"^\s*(?P<h>[A-Za-z][\w '’/&()-]{0,60}?)\s*:\s*$")
_UPPER = re.compile(r"^\s*(?P<h>[A-Z][A-Z0-9 ,&/'’()-]{2,80})\s*$")
_ALONE = re.compile(r"^\s*(?P<h>[A-Z][^.;:!?|]{0,80}?)\s*$")
_TABLE = re.compile(r"^\s*(?:\||-{3,}\|)")
# A list item opening with a short label: "- cause: ...", "- todo: ...". In a list of them each item is
# a part of its own, whether or not its label names a field.
_LABELLED_ITEM = re.compile(r"^\s*[-*+•]\s+(?P<h>[A-Za-z][\w'’ /-]{0,40}?)\s*:\s+(?P<rest>\S.*)$")
MAX_ITEM_LABEL_WORDS = 4
_ITEM = re.compile(r"^\s*[-*+•]\s")
# The first line of a paragraph that is a field's words alone ("The fix", "tl;dr"), its text right
# under it: a wiki's loose heading.
_LOOSE = re.compile(r"^\s*(?P<h>[A-Za-z][^.!?:|`]{0,40}?)\s*$")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
MAX_HEADING_WORDS = 8
# A heading names a field when it has at most this many words besides the field's phrase.
MAX_EXTRA_WORDS = 3


def words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower().replace("’", "'")))


# Each template field's phrases as words: its name, its label, its aliases.
PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (field.name, phrase)
    for field in FIELDS
    for phrase in dict.fromkeys(words(p) for p in (field.words, field.label, *field.aliases))
    if phrase
)
_INLINE = re.compile(
    r"^\s*(?:[-*>]+\s*)?(?P<h>"
    + "|".join(
        re.escape(p)
        for p in sorted({" ".join(w) for _, w in PHRASES} | {f.label for f in FIELDS}, key=len, reverse=True)
    )
    + r")\s*[:：]\s*(?P<rest>\S.*)$",
    re.IGNORECASE,
)


# Parts of a post-mortem that hold no template field: a timeline (alerts, pages and moves that failed or
# worked, in the order they came), what the team learned or got right, how to reproduce it. Their text
# is no field's, by its heading or by its sentences' cues. ("What went wrong" is neither: it mixes moves
# that made things worse, which its sentences' cues find, with gaps in the process, which they do not.)
ASIDES: tuple[tuple[str, ...], ...] = tuple(
    words(phrase)
    for phrase in (
        "timeline",
        "lessons learned",
        "lessons",
        "what we learned",
        "what went well",
        "where we got lucky",
        "steps to reproduce",
        "how to reproduce",
        "appendix",
        "references",
        "participants",
        "attendees",
        "glossary",
    )
)


def aside(heading: str) -> bool:
    """Whether a heading opens a part that holds no template field (``ASIDES``)."""
    found = words(heading)
    return any(found[: len(p)] == p and len(found) <= len(p) + MAX_EXTRA_WORDS for p in ASIDES)


def fields_of(heading: str) -> tuple[str, ...]:
    """The template fields a heading names, the earliest-starting phrase's first (the longest when two
    start together), each phrase counted if the heading has few words besides it; never for one of the
    ``ASIDES``. "Root cause and remediation" names two: a section's own field, and one its sentences
    may belong to by their cues."""
    if aside(heading):
        return ()
    found = words(heading)
    named: list[tuple[int, int, str]] = []
    for name, phrase in PHRASES:
        if len(found) > len(phrase) + MAX_EXTRA_WORDS:
            continue
        for at in range(len(found) - len(phrase) + 1):
            if found[at : at + len(phrase)] == phrase:
                named.append((at, -len(phrase), name))
                break
    return tuple(dict.fromkeys(name for _, _, name in sorted(named)))


def field_of(heading: str) -> str | None:
    """The template field a heading names (the first of ``fields_of``), or None."""
    return next(iter(fields_of(heading)), None)


@dataclass(frozen=True)
class Line:
    start: int
    end: int  # before the newline
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()


def lines_of(text: str) -> list[Line]:
    found, at = [], 0
    for raw in text.split("\n"):
        found.append(Line(at, at + len(raw), raw))
        at += len(raw) + 1
    return found


@dataclass(frozen=True)
class Section:
    """The text under one heading: ``field`` is the template field the heading names, or None;
    ``also`` the other fields it names ("Root cause and remediation"); ``aside`` says the heading opens
    a part that holds none."""

    heading: str
    field: str | None
    body: Span
    aside: bool = False
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Break:
    index: int  # the line the heading is on
    skip: int  # how many lines the heading takes
    heading: str
    body_start: int  # offset where the section's text starts
    alone: bool = False  # only a short line between blank lines: a heading by its shape alone
    loose: bool = False  # a field's words opening a paragraph: it heads that paragraph only


def _heading(lines: list[Line], i: int) -> _Break | None:
    line = lines[i]
    text = line.text
    if line.blank:
        return None
    if _TABLE.match(text):
        return _Break(i, 1, "", line.end)
    inline = _INLINE.match(text)
    if inline:
        return _Break(i, 0, inline.group("h"), line.start + inline.start("rest"))
    item = _LABELLED_ITEM.match(text)
    if item and len(words(item.group("h"))) <= MAX_ITEM_LABEL_WORDS:
        return _Break(i, 0, item.group("h"), line.start + item.start("rest"))
    nxt = lines[i + 1] if i + 1 < len(lines) else None
    if nxt is not None and _SETEXT_RULE.match(nxt.text) and not _SETEXT_RULE.match(text):
        return _Break(i, 2, text.strip(), nxt.end)
    for pattern in (_ATX, _BOLD, _LABEL, _UPPER):
        match = pattern.match(text)
        if match and len(words(match.group("h"))) <= MAX_HEADING_WORDS:
            return _Break(i, 1, match.group("h").strip(), line.end)
    prev_blank = i == 0 or lines[i - 1].blank
    next_blank = nxt is None or nxt.blank
    alone = _ALONE.match(text)
    if alone and prev_blank and next_blank and 0 < len(words(text)) <= MAX_HEADING_WORDS:
        return _Break(i, 1, alone.group("h").strip(), line.end, alone=True)
    loose = _LOOSE.match(text)
    if loose and prev_blank and not next_blank and field_of(loose.group("h")) is not None:
        return _Break(i, 1, loose.group("h").strip(), line.end, loose=True)
    return None


def _breaks(lines: list[Line]) -> Iterator[_Break]:
    i = 0
    awaiting = False  # a heading named a field and nothing stands under it yet
    item = False  # the last heading was a labelled list item: the next item is no part of it
    while i < len(lines):
        found = _heading(lines, i)
        if found and found.alone and awaiting:
            found = None
        if found is None and item and _ITEM.match(lines[i].text):
            found = _Break(i, 0, "", lines[i].start)
        if found:
            yield found
            awaiting = found.skip > 0 and field_of(found.heading) is not None
            item = _LABELLED_ITEM.match(lines[i].text) is not None and found.skip == 0
        elif not lines[i].blank:
            awaiting = False
        i += max(found.skip, 1) if found else 1


def trimmed(text: str, span: Span) -> Span | None:
    """The span without the whitespace at its ends, or None when nothing else is left."""
    piece = text[span.start : span.end]
    if not piece.strip():
        return None
    return Span(span.start + len(piece) - len(piece.lstrip()), span.end - (len(piece) - len(piece.rstrip())))


def heading_lines(text: str) -> list[Span]:
    """The lines every heading takes, markers and all ("### What we saw", a title and its underline):
    the words of a heading are no sentence of the prose under it."""
    lines = lines_of(text)
    return [
        Span(lines[b.index].start, lines[b.index + b.skip - 1].end)
        for b in _breaks(lines)
        if b.skip > 0 and b.heading
    ]


def sections(text: str) -> list[Section]:
    """Every headed section in order (the text before the first heading is not one)."""
    lines = lines_of(text)
    found: list[Section] = []
    breaks = list(_breaks(lines))
    for here, after in zip(breaks, [*breaks[1:], None], strict=False):
        end = lines[after.index].start if after else len(text)
        if here.loose:
            blank = re.search(r"\n[ \t]*\n", text[here.body_start : end])
            end = here.body_start + blank.start() if blank else end
        body = trimmed(text, Span(min(here.body_start, end), end))
        if body and here.heading:
            named = fields_of(here.heading)
            field = named[0] if named else None
            found.append(Section(here.heading, field, body, aside(here.heading), named[1:]))
    return found


def paragraphs(text: str, span: Span) -> list[Span]:
    """The blank-line-separated paragraphs inside a span."""
    found: list[Span] = []
    start = span.start
    for blank in re.finditer(r"\n[ \t]*\n", text[span.start : span.end]):
        piece = trimmed(text, Span(start, span.start + blank.start()))
        if piece:
            found.append(piece)
        start = span.start + blank.end()
    last = trimmed(text, Span(start, span.end))
    return [*found, last] if last else found
