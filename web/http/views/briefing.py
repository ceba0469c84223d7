"""A stored briefing made ready for the page: every ``[n]`` a link to the evidence it names.

Text is split into plain segments and citation segments here, so the template escapes the plain text
and writes links itself; nothing from the briefing (which quotes alerts and memory) is ever marked safe.
An incident cited as evidence links to its record page, a profile pattern to its place on the profile
that holds it (the service's or the team's),
the alert to the signal panel, anything else to its entry in the evidence list below the briefing
(``Anchors`` says where those are on the page).
"""

import re
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from agent.core.schema import field_words

_MARKER = re.compile(r"\[(\d+)\]")
SECTIONS = (
    ("likely_causes", "Likely causes"),
    ("first_checks", "First checks"),
    ("suggested_fix", "Suggested fix"),
    ("risky_actions", "Risky actions to avoid"),
)


@dataclass(frozen=True)
class Citation:
    n: int
    href: str
    title: str


@dataclass(frozen=True)
class Segment:
    text: str = ""
    citation: Citation | None = None


@dataclass(frozen=True)
class Line:
    """Cited text; for a claim, also its role and the field it rests on, in words."""

    segments: list[Segment]
    role: str | None = None
    field: str | None = None


@dataclass(frozen=True)
class Evidence:
    n: int
    kind: str
    id: str | None
    service: str | None
    title: str
    text: str
    href: str
    uncertain: bool
    flagged: bool


HEAD_SECTIONS = (
    ("checks", "more_checks", "Check first"),
    ("fixes", "more_fixes", "Try"),
    ("risky", "more_risky", "Do not"),
)


@dataclass(frozen=True)
class HeadLine:
    line: Line
    support: int
    last_seen: str | None


@dataclass(frozen=True)
class HeadSection:
    key: str
    title: str
    items: list[HeadLine]
    more: list[HeadLine]


@dataclass(frozen=True)
class HeadView:
    """The briefing's short ranked head (``agent.briefing.head``): the first line, then three short lists."""

    first_line: Line
    recurrence: str | None
    sections: list[HeadSection]

    @property
    def more_count(self) -> int:
        return sum(len(s.more) for s in self.sections)


@dataclass
class BriefingView:
    summary: Line
    sections: dict[str, list[Line]]
    related: list[dict[str, Any]]
    evidence: list[Evidence]
    seen_before: str
    noise: list[str]
    disputed: list[str]
    mode: str
    memory: str
    warnings: list[str]
    generated_at: str | None
    citation_check: dict[str, int]
    hops: list[dict[str, Any]] = field(default_factory=list)
    head: HeadView | None = None


@dataclass(frozen=True)
class Anchors:
    """Where a citation of the alert and of an evidence entry points on the page showing the briefing.

    The incident page holds the signal panel and one evidence list (``#ev-3``); the replay page shows
    two briefings, each with its own numbering, and no signal panel.
    """

    signal: str = "#signal"
    evidence: str = "ev-"


def evidence_href(item: dict[str, Any], anchors: Anchors) -> str:
    kind, ident = item.get("kind"), item.get("id")
    if kind == "incident" and ident:
        return f"/records/{ident}"
    if kind == "profile" and ident:
        # A service's pattern is on that service's profile page, the team's on the plain one.
        service = item.get("service")
        page = f"/profile?{urlencode({'service': service})}" if service else "/profile"
        return f"{page}#pattern-{ident}"
    if kind == "alert":
        return anchors.signal
    return f"#{anchors.evidence}{item.get('n')}"


def _claim_line(item: dict[str, Any], index: dict[int, Citation]) -> Line:
    """A stored claim or head item as a line (one stored before claims were typed has no role)."""
    line = _line(str(item.get("text", "")), list(item.get("citations", [])), index)
    return replace(line, role=item.get("role"), field=field_words(item.get("field")))


def _line(text: str, citations: list[int], index: dict[int, Citation]) -> Line:
    segments: list[Segment] = []
    seen: set[int] = set()
    position = 0
    for match in _MARKER.finditer(text):
        n = int(match.group(1))
        if n not in index:
            continue
        if match.start() > position:
            segments.append(Segment(text=text[position : match.start()]))
        segments.append(Segment(citation=index[n]))
        seen.add(n)
        position = match.end()
    if position < len(text):
        segments.append(Segment(text=text[position:]))
    segments.extend(Segment(citation=index[n]) for n in citations if n in index and n not in seen)
    return Line(segments=segments)


def _head_lines(items: list[dict[str, Any]], index: dict[int, Citation]) -> list[HeadLine]:
    return [
        HeadLine(
            line=_claim_line(i, index),
            support=int(i.get("support", 0)),
            last_seen=i.get("last_seen"),
        )
        for i in items
    ]


def head_view(data: dict[str, Any] | None, index: dict[int, Citation]) -> HeadView | None:
    """The stored head, or ``None`` for a briefing stored before heads existed."""
    if not data:
        return None
    return HeadView(
        first_line=_line(str(data.get("first_line", "")), [], index),
        recurrence=data.get("recurrence"),
        sections=[
            HeadSection(
                key=key,
                title=title,
                items=_head_lines(list(data.get(key, [])), index),
                more=_head_lines(list(data.get(more, [])), index),
            )
            for key, more, title in HEAD_SECTIONS
        ],
    )


def briefing_view(data: dict[str, Any], anchors: Anchors = Anchors()) -> BriefingView:
    evidence = [
        Evidence(
            n=int(item["n"]),
            kind=str(item.get("kind", "")),
            id=item.get("id"),
            service=item.get("service"),
            title=str(item.get("title", "")),
            text=str(item.get("text", "")),
            href=evidence_href(item, anchors),
            uncertain=bool(item.get("uncertain")),
            flagged=bool(item.get("flagged")),
        )
        for item in data.get("evidence", [])
    ]
    index = {e.n: Citation(n=e.n, href=e.href, title=e.title) for e in evidence}
    sections = {key: [_claim_line(i, index) for i in data.get(key, [])] for key, _ in SECTIONS}
    return BriefingView(
        summary=_line(str(data.get("summary", "")), [], index),
        sections=sections,
        related=list(data.get("related_incidents", [])),
        evidence=evidence,
        seen_before=str(data.get("seen_before", "novel")),
        noise=[str(i) for i in data.get("noise") or []],
        disputed=[str(i) for i in data.get("disputed") or []],
        mode=str(data.get("mode", "")),
        memory=str(data.get("memory", "")),
        warnings=[str(w) for w in data.get("warnings", [])],
        generated_at=data.get("generated_at"),
        citation_check=dict(data.get("citation_check", {})),
        hops=list(data.get("hops", [])),
        head=head_view(data.get("head"), index),
    )
