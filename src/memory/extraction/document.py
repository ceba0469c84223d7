"""One source document as the extractor reads it: plain text, whatever file or export it came from."""

from collections.abc import Mapping
from dataclasses import dataclass


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
