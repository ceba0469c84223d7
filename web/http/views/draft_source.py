"""A draft's source text cut into segments, each span an extracted field came from marked with the
field's name, so the page can show the source beside the fields and link each field to its proof."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Segment:
    text: str
    field: str | None = None  # the field this span proves, None for the text between spans
    anchor: str = ""  # the element id a field's link jumps to


def segments(text: str, fields: dict[str, Any]) -> list[Segment]:
    """The whole text, in order; where spans overlap, the earlier span keeps the shared characters."""
    marks = sorted(
        (int(start), int(end), name, n)
        for name, field in fields.items()
        for n, (start, end) in enumerate((field or {}).get("spans") or [])
        if 0 <= int(start) < int(end) <= len(text)
    )
    out: list[Segment] = []
    at = 0
    for start, end, name, n in marks:
        start = max(start, at)
        if start >= end:
            continue
        if start > at:
            out.append(Segment(text[at:start]))
        out.append(Segment(text[start:end], name, f"src-{name}-{n}"))
        at = end
    if at < len(text):
        out.append(Segment(text[at:]))
    return out


def anchors(parts: list[Segment]) -> dict[str, list[str]]:
    """Each field's marked spans, by the element ids its links jump to."""
    found: dict[str, list[str]] = {}
    for part in parts:
        if part.field is not None:
            found.setdefault(part.field, []).append(part.anchor)
    return found
