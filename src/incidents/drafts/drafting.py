"""A source document into a draft: its extraction with the spans as proof, and a near-duplicate flag.

A draft close to a stored post-mortem or another pending draft is flagged as a near-duplicate, for the
reviewer to compare: the same incident is often written up twice (a status page and an internal
review, one post-mortem posted under two products). Closeness is the content-word overlap (Jaccard)
of the symptom, root cause and resolution.
"""

from dataclasses import dataclass

from incidents.drafts.service import NewDraft, comparison_text, missing_of
from memory.extraction.document import SourceDocument
from memory.extraction.draft import incident_id_for
from memory.extraction.extract import Extraction, extract
from memory.text import tokens

NEAR_DUPLICATE = 0.6
MIN_TOKENS = 8  # shorter texts overlap by chance


@dataclass
class Seen:
    """The content words of every post-mortem a new draft could duplicate, by label."""

    texts: list[tuple[str, frozenset[str]]]

    def add(self, label: str, text: str) -> None:
        self.texts.append((label, frozenset(tokens(text))))

    def closest(self, text: str) -> str | None:
        words = frozenset(tokens(text))
        if len(words) < MIN_TOKENS:
            return None
        best, label = NEAR_DUPLICATE, None
        for other, other_words in self.texts:
            if len(other_words) < MIN_TOKENS:
                continue
            overlap = len(words & other_words) / len(words | other_words)
            if overlap >= best:
                best, label = overlap, f"{other} ({overlap:.0%} of words shared)"
        return label


def _fields(extraction: Extraction) -> dict[str, dict[str, object]]:
    named = {"title": extraction.title, "service": extraction.service, **extraction.fields}
    return {
        name: {
            "value": field.value,
            "spans": [[span.start, span.end] for span in field.spans],
            "origin": field.origin,
        }
        for name, field in named.items()
    }


def draft_of(document: SourceDocument, seen: Seen) -> NewDraft:
    extraction = extract(document)
    fields = _fields(extraction)
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
        near_duplicate=seen.closest(comparison_text(fields)),
    )
