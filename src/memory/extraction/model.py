"""What an extraction is made of: spans of the source text, the fields built from them, the result."""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__")
_CHECKBOX = re.compile(r"^(\s*[-*+]\s+)\[[ xX]\]\s+")  # "- [ ] Alert on queue age": a task list's box


@dataclass(frozen=True, order=True)
class Span:
    """``text[start:end]`` of the document the extraction was made from."""

    start: int
    end: int


def fragment(text: str, span: Span) -> str:
    """The span's text as a field holds it: hard-wrapped lines joined, list items and paragraphs kept
    on lines of their own, bold markers and a task list's boxes dropped."""
    lines: list[str] = []
    joining = False
    for raw in _EMPHASIS.sub("", text[span.start : span.end]).splitlines():
        line = " ".join(_CHECKBOX.sub(r"\1", raw).split())
        if not line:
            joining = False
            continue
        if joining and not _LIST_ITEM.match(line):
            lines[-1] += " " + line
        else:
            lines.append(line)
        joining = True
    return "\n".join(lines)


def joined(text: str, spans: Iterable[Span]) -> str:
    """The value a field's spans make: their fragments, one after the other, a line apart."""
    return "\n".join(part for part in (fragment(text, s) for s in spans) if part)


Origin = Literal["text", "meta"]


@dataclass(frozen=True)
class ExtractedField:
    """One field's value and its proof. From the text (``origin="text"``), ``value`` is built from
    ``spans`` alone and is empty when no span supports it; from the document's ``meta`` (a value an
    export states outright) it has no span."""

    value: str
    spans: tuple[Span, ...] = ()
    origin: Origin = "text"

    @property
    def filled(self) -> bool:
        return bool(self.value)


EMPTY = ExtractedField("")


@dataclass(frozen=True)
class Extraction:
    """Every field of the labeled template (``memory.template.FIELDS``, by name), the service and the
    title the import row also carries, the required template fields left empty, and the share of the
    post-mortem fields (``memory.template.POST_MORTEM``) that were filled."""

    fields: Mapping[str, ExtractedField]
    service: ExtractedField
    title: ExtractedField
    missing: tuple[str, ...]
    fill_rate: float

    def __getitem__(self, name: str) -> ExtractedField:
        return self.fields[name]
