"""A source document into a draft: its extraction with the spans as proof, and a near-duplicate flag.

A draft close to a stored post-mortem or another pending draft is flagged as a near-duplicate, for the
reviewer to compare: the same incident is often written up twice (a status page and an internal
review, one post-mortem posted under two products). Closeness is the content-word overlap (Jaccard)
of the symptom, root cause and resolution. A draft closest to the incident an accepted draft became,
of the same service, is a revision of that incident instead (a post-mortem edited and moved), as is
a changed version of an accepted document's source (``incidents.drafts.revisions``); the incident it
revises is no near-duplicate of it.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from incidents.drafts.revisions import Revised
from incidents.drafts.service import NewDraft, comparison_text, missing_of
from memory.extraction.document import SourceDocument
from memory.extraction.draft import incident_id_for
from memory.extraction.extract import Extraction, extract
from memory.text import tokens

NEAR_DUPLICATE = 0.6
MIN_TOKENS = 8  # shorter texts overlap by chance


@dataclass(frozen=True)
class Match:
    label: str
    overlap: float

    def __str__(self) -> str:
        return f"{self.label} ({self.overlap:.0%} of words shared)"


@dataclass
class Seen:
    """The content words of every post-mortem a new draft could duplicate, by label; ``revisable``
    maps the incidents accepted drafts became to their services."""

    texts: dict[str, frozenset[str]] = field(default_factory=dict)
    revisable: dict[str, str] = field(default_factory=dict)

    def revises(self, label: str, service: str) -> bool:
        """A near-duplicate of this label is a revision of it: one outage of one service (a post-mortem
        posted under two products stays a near-duplicate of the other)."""
        return label in self.revisable and (not service or self.revisable[label] == service)

    def add(self, label: str, text: str) -> None:
        self.texts[label] = frozenset(tokens(text))

    def drop(self, label: str) -> None:
        self.texts.pop(label, None)

    def closest(self, text: str, skip: str | None = None) -> Match | None:
        words = frozenset(tokens(text))
        if len(words) < MIN_TOKENS:
            return None
        found = None
        for other, other_words in self.texts.items():
            if other == skip or len(other_words) < MIN_TOKENS:
                continue
            overlap = len(words & other_words) / len(words | other_words)
            if overlap >= (found.overlap if found else NEAR_DUPLICATE):
                found = Match(other, overlap)
        return found


def _fields(extraction: Extraction, typed: Mapping[str, str]) -> dict[str, dict[str, object]]:
    """Each field as extracted, or, where the text says nothing, as a person typed it into an earlier
    version (``origin`` "edited", no span)."""
    named = {"title": extraction.title, "service": extraction.service, **extraction.fields}
    return {
        name: {"value": typed[name], "spans": [], "origin": "edited"}
        if not field.value.strip() and name in typed
        else {
            "value": field.value,
            "spans": [[span.start, span.end] for span in field.spans],
            "origin": field.origin,
        }
        for name, field in named.items()
    }


def draft_of(
    document: SourceDocument,
    seen: Seen,
    revised: Revised | None = None,
    typed: Mapping[str, str] | None = None,
    services: Collection[str] = (),
) -> NewDraft:
    """``revised``: the incident an earlier version of the same source was accepted as; ``typed``: what
    a person typed into that version's fields (``revisions.typed_of_source``); ``services``: the team's
    known services, for a note that names its service only in passing."""
    extraction = extract(document, services)
    fields = _fields(extraction, typed or {})
    match = seen.closest(comparison_text(fields), skip=revised.incident_id if revised else None)
    if revised is None and match is not None and seen.revises(match.label, extraction.service.value):
        revised, match = Revised(match.label, f"near-duplicate, {match.overlap:.0%} of words shared"), None
    return NewDraft(
        content_hash=document.content_hash,
        source_name=document.name,
        source_kind=document.kind,
        source_text=document.text,
        source_meta=dict(document.meta),
        incident_id=incident_id_for(document),
        fields=fields,
        missing=tuple(missing_of(fields)),
        fill_rate=extraction.fill_rate,
        near_duplicate=None if match is None else str(match),
        revises=revised.incident_id if revised else None,
        revision_reason=revised.reason if revised else None,
    )
