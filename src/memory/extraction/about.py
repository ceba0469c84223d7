"""What a post-mortem is about: its title, the service it names, the day it happened."""

import re
from collections.abc import Collection

from memory.extraction.headings import aside, field_of, lines_of, trimmed
from memory.extraction.model import Span
from memory.extraction.values import DATE, date_in

MAX_TITLE = 300
MAX_SERVICE = 255
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<h>[^\n]+?)[ \t#]*$", re.MULTILINE)
_SERVICE_WORDS = r"\**(?:affected\s+)?(?:services?|components?|systems?|products?)(?:\s+affected)?\**"
_SERVICE_LABEL = re.compile(
    rf"^\s*(?:[-*]\s*)?{_SERVICE_WORDS}\s*[:：]\s*\**(?P<v>[^\n]+?)\**\s*(?:\.(?:\s|$)|[;,(]|$)"
    # or a table's row: "| Service | partner-api |" (an HTML table reads the same)
    rf"|^\s*\|\s*{_SERVICE_WORDS}\s*\|\s*\**(?P<t>[^|\n]+?)\**\s*(?:\||$)",
    re.IGNORECASE | re.MULTILINE,
)
# "Google Cloud Datastore Incident #17002", "Payments API outage", "Summary of the Amazon S3 Service
# Event": the words before the incident noun.
_TITLE_SERVICE = re.compile(
    r"^(?:(?:summary|review|report|post-?mortem) of (?:the )?)?"
    r"(?P<v>[A-Z][\w .&/-]{1,80}?)\s+(?:incident|outage|disruption|degradation|service event|event)\b",
    re.IGNORECASE,
)
_LINK = re.compile(r"\[(?P<t>[^\]]*)\]\([^)]*\)|!\[[^\]]*\]")
# Words near the date an incident happened, as opposed to the date a page was written or printed.
_STARTED = re.compile(
    r"\b(?:began|started|starting|occurred|beginning|on|between|from|date|timestamp|when)\b[^\n]{0,40}$",
    re.IGNORECASE,
)


def _plain(span: Span, text: str) -> bool:
    """A title candidate: words, not a logo, a link list or a table."""
    piece = text[span.start : span.end]
    return not _LINK.search(piece) and "|" not in piece and any(c.isalpha() for c in piece)


def _section(heading: str) -> bool:
    """A heading that opens a section ("Root cause", "Timeline"), not one that titles the post-mortem."""
    return field_of(heading) is not None or aside(heading)


def heading_title_span(text: str) -> Span | None:
    """The first Markdown heading that is plain words and names no template field: a Google Docs
    export heads its sections ("# Impact", "# Root cause") as a Markdown post-mortem heads its title."""
    for match in _ATX.finditer(text):
        span = Span(match.start("h"), match.end("h"))
        if _plain(span, text) and span.end - span.start <= MAX_TITLE and not _section(match.group("h")):
            return span
    return None


def first_line_span(text: str) -> Span | None:
    """The first line of words that is no section heading (a heading's words, without its marks): the
    title when no heading gives one."""
    for line in lines_of(text):
        marked = _ATX.fullmatch(line.text)
        if marked and _section(marked.group("h")):
            continue
        words = Span(line.start + marked.start("h"), line.start + marked.end("h")) if marked else None
        words = words or trimmed(text, Span(line.start, line.end))
        if words and _plain(words, text) and words.end - words.start <= MAX_TITLE:
            return words
    return None


def service_span(text: str, title: Span | None) -> Span | None:
    """A ``Service:`` line's value, else the words a title puts before "incident" or "outage"."""
    labelled = _SERVICE_LABEL.search(text)
    group = "v" if labelled and labelled.group("v") else "t"
    if labelled and labelled.end(group) - labelled.start(group) <= MAX_SERVICE:
        return Span(labelled.start(group), labelled.end(group))
    if title is not None:
        named = _TITLE_SERVICE.match(text[title.start : title.end])
        if named:
            return Span(title.start + named.start("v"), title.start + named.end("v"))
    return None


def date_span(text: str) -> tuple[Span, str] | None:
    """The day it happened (ISO), from the first date the text says something began on; else the
    first date in it."""
    first: tuple[Span, str] | None = None
    for match in DATE.finditer(text):
        day = date_in(match.group())
        if day is None:
            continue
        found = (Span(match.start(), match.end()), day.isoformat())
        if _STARTED.search(text[max(0, match.start() - 60) : match.start()]):
            return found
        first = first or found
    return first


def _spoken(service: str) -> re.Pattern[str]:
    """A service name as a note writes it: any case, "-", "_" or a space between its parts, as a
    whole name ("route-planner" in "route planner pods", not "auth" in "auth-proxy")."""
    parts = [re.escape(part) for part in re.split(r"[-_\s]+", service.strip()) if part]
    return re.compile(r"(?<![\w-])" + r"[-_ ]".join(parts) + r"(?![\w]|-\w)", re.IGNORECASE)


def known_service(text: str, title: Span | None, services: Collection[str]) -> tuple[Span, str] | None:
    """The first of the team's ``services`` the title names, else the first the text names (the longest
    when two start together), with the words that name it."""
    found: list[tuple[int, int, Span, str]] = []
    for service in services:
        if not service.strip():
            continue
        match = _spoken(service).search(text)
        if match:
            span = Span(match.start(), match.end())
            in_title = title is not None and title.start <= span.start and span.end <= title.end
            found.append((0 if in_title else 1, span.start, span, service))
    if not found:
        return None
    _, _, span, service = min(found, key=lambda f: (f[0], f[1], -(f[2].end - f[2].start)))
    return span, service
