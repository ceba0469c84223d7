"""One source document as the extractor reads it: plain text, whatever file or export it came from."""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class SourceDocument:
    """``text`` is plain text after decoding; ``meta`` holds what an export states outright (service,
    started_at, title, ...); ``content_hash`` identifies the content, so the same file read twice is
    recognised."""

    name: str
    kind: str
    text: str
    content_hash: str
    meta: Mapping[str, str]


def from_text(
    name: str, text: str, kind: str = "text", meta: Mapping[str, str] | None = None
) -> SourceDocument:
    """A document whose text needs no decoding (a benchmark's raw file, a test), hashed by its text."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return SourceDocument(
        name=name, kind=kind, text=text, content_hash=digest, meta=MappingProxyType(dict(meta or {}))
    )
