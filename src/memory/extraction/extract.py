"""``extract``: one post-mortem's text into the labeled template, every field with its source spans.

Headings first: a section headed with a field's words (``memory.extraction.headings``) gives that
field its paragraphs. A field still empty stays empty: nothing is filled without a span of the text
that says it, except what the document's ``meta`` states outright (an export's service or start time).
A paragraph repeated word for word (status pages print each update twice) counts once.
"""

import re
from collections.abc import Collection, Iterator, Mapping

from memory.extraction.about import (
    MAX_SERVICE,
    MAX_TITLE,
    date_span,
    first_line_span,
    heading_title_span,
    known_service,
    service_span,
)
from memory.extraction.document import SourceDocument
from memory.extraction.headings import Section, heading_lines, lines_of, paragraphs, sections, trimmed
from memory.extraction.model import EMPTY, ExtractedField, Extraction, Span, fragment, joined
from memory.extraction.prose import RECOVERED, Role, role_of, sentences
from memory.extraction.signature import signature_spans
from memory.extraction.values import DATE, date_in, kind_in
from memory.template import FIELDS, POST_MORTEM_NAMES, TemplateField

__all__ = ["ExtractedField", "Extraction", "Span", "extract"]

_BY_NAME = {f.name: f for f in FIELDS}
# The required template fields a person must see filled before memory takes the draft.
REQUIRED: tuple[str, ...] = tuple(f.name for f in FIELDS if f.required)
# Roles a sentence without cues carries on from the one before it, in prose without headings.
_CONTINUED: frozenset[Role | None] = frozenset({"root_cause", "resolution_steps", "symptom"})
MIN_PROSE_WORDS = 6
_SO = re.compile(r"so\b", re.IGNORECASE)  # a consequence split from its sentence (prose.sentences)
_LABELLED_LINE = re.compile(r"^\s*[A-Za-z][\w /-]{0,30}:\s+\S")


def capped(text: str, spans: list[Span], limit: int | None) -> tuple[Span, ...]:
    """The leading spans whose value fits ``limit`` characters; the first alone is cut to fit."""
    if limit is None:
        return tuple(spans)
    kept: list[Span] = []
    for span in spans:
        if len(joined(text, [*kept, span])) <= limit:
            kept.append(span)
        elif not kept:
            end = span.start + limit
            while end > span.start and len(fragment(text, Span(span.start, end))) > limit:
                end -= max(1, (end - span.start) // 10)
            cut = trimmed(text, Span(span.start, end))
            kept.extend([cut] if cut else [])
            break
        else:
            break
    return tuple(kept)


def _text_field(text: str, field: TemplateField, spans: list[Span]) -> ExtractedField:
    kept = capped(text, spans, field.max_length)
    value = joined(text, kept)
    return ExtractedField(value, kept) if value else EMPTY


def _first_line(text: str, body: Span) -> Span | None:
    line = next((ln for ln in lines_of(text[body.start : body.end]) if not ln.blank), None)
    return trimmed(text, Span(body.start + line.start, body.start + line.end)) if line else None


def _valued(text: str, field: TemplateField, section: Section) -> ExtractedField:
    """A field whose value is read from its section rather than copied: a date, a kind, one line."""
    line = _first_line(text, section.body)
    if line is None:
        return EMPTY
    piece = text[line.start : line.end]
    if field.kind == "time":
        match = DATE.search(piece)
        day = date_in(match.group()) if match else None
        if match is None or day is None:
            return EMPTY
        return ExtractedField(day.isoformat(), (Span(line.start + match.start(), line.start + match.end()),))
    if field.kind == "kind":
        kind = kind_in(piece)
        return ExtractedField(kind, (line,)) if kind else EMPTY
    value = fragment(text, line)
    return (
        ExtractedField(value, (line,)) if value and len(value) <= (field.max_length or len(value)) else EMPTY
    )


def _prompted(before: Role | None, role: Role | None, said: str) -> bool:
    """A step taken as a consequence of what was seen ("latency was still high, so engineers
    restarted ..."): what moved the team to act is part of the step, unless it is the cause."""
    return role == "resolution_steps" and before in (None, "symptom") and _SO.match(said) is not None


def _runs(text: str, paragraph: Span, inherit: bool) -> Iterator[tuple[Span, Role | None]]:
    """The paragraph's sentences by role, neighbours of one role merged into one span. With
    ``inherit``, a sentence without a cue continues the role of the one before it."""
    run: Span | None = None
    run_role: Role | None = None
    for sentence in sentences(text, paragraph):
        said = text[sentence.start : sentence.end]
        role = role_of(said)
        if role is None and inherit and run_role in _CONTINUED:
            role = run_role
        # a chat message's time and speaker, between two messages, are no part of either
        adjacent = run is not None and not text[run.end : sentence.start].strip()
        if run is not None and adjacent and (role == run_role or _prompted(run_role, role, said)):
            run, run_role = Span(run.start, sentence.end), role
            continue
        if run is not None:
            yield run, run_role
        run, run_role = sentence, role
    if run is not None:
        yield run, run_role


def _recovered(text: str, paragraph: Span) -> list[Span]:
    """The sentences saying the service came back ("it cleared within ten minutes"): how it ended,
    when nothing else says so."""
    return [s for s in sentences(text, paragraph) if RECOVERED.search(text[s.start : s.end])]


def _said(text: str, span: Span) -> str:
    return " ".join(fragment(text, span).split()).lower()


def _free(text: str, span: Span) -> bool:
    """Prose the rules may read: not a table row, a heading line, a paragraph of links, nor a header of
    labelled lines ("Service: vpn-gateway", "Date: ...", "Author: ..."), whose words ("failover" in a
    title) are no sentence's."""
    piece = text[span.start : span.end]
    lines = [line for line in piece.splitlines() if line.strip()]
    labelled = sum(bool(_LABELLED_LINE.match(line)) for line in lines)
    header = len(lines) > 1 and 2 * labelled >= len(lines)
    return "](" not in piece and "|" not in piece and not header and len(piece.split()) >= MIN_PROSE_WORDS


def _prose(text: str, found: list[Span], headings: list[Span]) -> list[Span]:
    """The paragraphs without the heading lines they open with or hold."""
    kept: list[Span] = []
    for paragraph in found:
        start = paragraph.start
        for heading in (h for h in headings if paragraph.start <= h.start < paragraph.end):
            before = trimmed(text, Span(start, heading.start))
            kept.extend([before] if before else [])
            start = max(start, heading.end)
        rest = trimmed(text, Span(start, paragraph.end))
        kept.extend([rest] if rest else [])
    return kept


def _assigned(text: str) -> tuple[dict[str, list[Span]], dict[str, ExtractedField]]:
    """Text fields by their spans, and the fields read from a labelled value (date, kind, one line).

    A headed section gives its field its text, except the sentences whose role says they belong
    elsewhere: asides go nowhere, prevention and follow-ups go to the outcome, a sentence of another
    field the heading names too goes there ("Root cause and remediation"), and what did not help is
    also a failed attempt. Prose outside headed sections fills only the fields no heading named. When
    nothing gives the outcome, the sentences that say the service came back are it."""
    headed: dict[str, list[Span]] = {}
    valued: dict[str, ExtractedField] = {}
    roled: dict[str, list[Span]] = {}
    covered: list[Span] = []
    recovered: list[Span] = []
    seen: set[str] = set()
    for section in sections(text):
        field = _BY_NAME.get(section.field or "")
        if section.aside:
            covered.append(section.body)  # neither its heading's field nor prose the cues may read
        if field is None:
            continue
        covered.append(section.body)
        if field.kind != "text":
            if field.name not in valued:
                value = _valued(text, field, section)
                if value.filled:
                    valued[field.name] = value
            continue
        for paragraph in paragraphs(text, section.body):
            said = _said(text, paragraph)
            if not said or said in seen:
                continue
            seen.add(said)
            recovered += _recovered(text, paragraph)
            for run, role in _runs(text, paragraph, inherit=False):
                if role == "aside":
                    continue
                target = role if role == "outcome" or role in section.also else field.name
                headed.setdefault(target, []).append(run)
                if role == "failed_attempts" and field.name != "failed_attempts":
                    roled.setdefault(role, []).append(run)
    for paragraph in _prose(text, paragraphs(text, Span(0, len(text))), heading_lines(text)):
        if any(p.start < paragraph.end and paragraph.start < p.end for p in covered):
            continue
        said = _said(text, paragraph)
        if not _free(text, paragraph) or said in seen:
            continue
        seen.add(said)
        recovered += _recovered(text, paragraph)
        for run, role in _runs(text, paragraph, inherit=True):
            if role is not None and role != "aside":
                roled.setdefault(role, []).append(run)
    found = dict(headed)
    for name, spans in roled.items():
        if name not in headed:
            found[name] = sorted(spans)
    if "outcome" not in found and recovered:
        found["outcome"] = sorted(recovered)
    if "error_signature" not in found:
        prose = [p for p in paragraphs(text, Span(0, len(text))) if _free(text, p)]
        found["error_signature"] = signature_spans(text, prose)
    return found, valued


def _from_text(text: str) -> dict[str, ExtractedField]:
    found, valued = _assigned(text)
    return {**{name: _text_field(text, _BY_NAME[name], spans) for name, spans in found.items()}, **valued}


def _meta(meta: Mapping[str, str], *keys: str) -> ExtractedField | None:
    for key in keys:
        value = " ".join(str(meta.get(key) or "").split())
        if value:
            return ExtractedField(value, (), "meta")
    return None


def _span_field(text: str, span: Span | None, limit: int) -> ExtractedField:
    if span is None:
        return EMPTY
    value = fragment(text, span)
    return ExtractedField(value, (span,)) if value and len(value) <= limit else EMPTY


def _service(text: str, title_at: Span | None, services: Collection[str]) -> ExtractedField:
    """A ``Service:`` line or the title's words before "incident", else the first of the team's known
    services the note names, as the team spells it (the span the words that name it)."""
    said = _span_field(text, service_span(text, title_at), MAX_SERVICE)
    if said.filled or not services:
        return said
    known = known_service(text, title_at, services)
    return ExtractedField(known[1], (known[0],)) if known else EMPTY


def extract(document: SourceDocument, services: Collection[str] = ()) -> Extraction:
    """Every template field of the document that a span of its text (or its ``meta``) supports.
    ``services``: the team's known services, to find the one a note names in passing."""
    text = document.text
    filled = _from_text(text)
    if "timestamp" not in filled:
        dated = date_span(text)
        if dated:
            filled["timestamp"] = ExtractedField(dated[1], (dated[0],))
    for name, keys in (
        ("timestamp", ("started_at", "created_at", "date")),
        ("resolved_by", ("resolved_by",)),
    ):
        given = _meta(document.meta, *keys)
        if given:
            filled[name] = given
    fields = {f.name: filled.get(f.name, EMPTY) for f in FIELDS}
    heading = heading_title_span(text)
    title_at = heading or first_line_span(text)
    # A page's <title> is often the site's or the wiki space's ("Engineering Wiki"): the page's own
    # title heading says more, and the <title> only stands in when the page has none.
    page_title = _meta(document.meta, "page_title") if heading is None else None
    title = _meta(document.meta, "title") or page_title or _span_field(text, title_at, MAX_TITLE)
    service = _meta(document.meta, "service") or _service(text, title_at, services)
    return Extraction(
        fields=fields,
        service=service,
        title=title,
        missing=tuple(name for name in REQUIRED if not fields[name].filled),
        fill_rate=sum(fields[name].filled for name in POST_MORTEM_NAMES) / len(POST_MORTEM_NAMES),
    )
