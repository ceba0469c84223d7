"""Turning what a Hindsight server answers into the bank's values: facts grouped into incidents.

Hindsight recall returns extracted *facts*, several per retained document, ranked by its own fusion.
RecallOps speaks in incidents, so facts are grouped by ``document_id`` in the server's order (an
incident ranks where its best fact ranks) and each incident carries the whole stored document, not
the fragment that matched. Pure functions over duck-typed response objects, so they are tested
without a server.
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from memory.bank import DocumentWrite, MentalModel, Operation, OperationStatus, RecalledIncident
from memory.schema import RecordFormatError, parse_record

CHANNELS = ("semantic", "keyword")
_STATUSES: dict[str, OperationStatus] = {
    "pending": "pending",
    "queued": "pending",
    "processing": "running",
    "running": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
}


class Scores(Protocol):
    """Read-only members, so the client's models (ints allowed where floats are) satisfy it."""

    @property
    def final(self) -> float: ...
    @property
    def semantic(self) -> float | None: ...
    @property
    def keyword(self) -> float | None: ...


class Fact(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def document_id(self) -> str | None: ...
    @property
    def tags(self) -> list[str] | None: ...
    @property
    def metadata(self) -> dict[str, str] | None: ...
    @property
    def occurred_start(self) -> str | None: ...
    @property
    def mentioned_at(self) -> str | None: ...
    @property
    def scores(self) -> Scores | None: ...


class Document(Protocol):
    original_text: str | None
    tags: list[str] | None
    document_metadata: dict[str, Any] | None


class StoredDocument(Document, Protocol):
    """A document as ``get_document`` answers: with its id, when it arrived and how it was retained."""

    id: str
    created_at: str
    retain_params: dict[str, Any] | None


@dataclass
class DocumentHits:
    """The facts of one document a recall returned, best first."""

    document_id: str
    facts: list[Fact] = field(default_factory=list)

    @property
    def score(self) -> float:
        return max((f.scores.final for f in self.facts if f.scores is not None), default=0.0)

    def best(self, channel: str) -> float | None:
        values = [getattr(f.scores, channel) for f in self.facts if f.scores is not None]
        present = [v for v in values if v is not None and v > 0]
        return max(present) if present else None


def group_by_document(facts: Iterable[Fact]) -> list[DocumentHits]:
    """Group facts by document in the order the server ranked them; facts with no document are dropped."""
    groups: dict[str, DocumentHits] = {}
    for fact in facts:
        if fact.document_id:
            groups.setdefault(fact.document_id, DocumentHits(fact.document_id)).facts.append(fact)
    return list(groups.values())


def channel_ranks(groups: Sequence[DocumentHits]) -> dict[str, dict[str, int]]:
    """Why each incident matched: its 1-based rank in each channel that found it (as on embedded)."""
    why: dict[str, dict[str, int]] = {g.document_id: {} for g in groups}
    for channel in CHANNELS:
        scored = [(g.best(channel), g.document_id) for g in groups]
        ranked = sorted(((s, d) for s, d in scored if s is not None), key=lambda sd: -sd[0])
        for rank, (_, document_id) in enumerate(ranked, start=1):
            why[document_id][channel] = rank
    return why


def to_incident(hits: DocumentHits, document: Document | None, why: dict[str, int]) -> RecalledIncident:
    """One incident: the stored document's full text (the matched facts' text if the server kept none)."""
    text = document.original_text if document is not None and document.original_text else None
    if text is None:
        text = "\n".join(f.text for f in hits.facts)
    try:
        record = parse_record(text)
    except RecordFormatError:
        record = None  # runbooks and appended notes are recalled as text
    if document is not None:
        tags = list(document.tags or [])
        metadata = {k: str(v) for k, v in (document.document_metadata or {}).items()}
    else:
        tags = list(dict.fromkeys(t for f in hits.facts for t in f.tags or []))
        metadata = {k: v for f in hits.facts for k, v in (f.metadata or {}).items()}
    moments = [parse_time(f.mentioned_at or f.occurred_start) for f in hits.facts]  # retain timestamp first
    known = [m for m in moments if m is not None]
    return RecalledIncident(
        id=hits.document_id,
        text=text,
        record=record,
        score=hits.score,
        why=why,
        tags=tags,
        metadata=metadata,
        timestamp=max(known) if known else None,
    )


def to_write(document: StoredDocument) -> DocumentWrite:
    """The write that stores the document again: its text, tags, metadata, and the timestamp and
    context it was retained with (the time it arrived when the server kept no timestamp)."""
    params = document.retain_params or {}
    context = params.get("context")
    moment = parse_time(params.get("event_date")) or parse_time(document.created_at)
    return DocumentWrite(
        document_id=document.id,
        content=document.original_text or "",
        tags=list(document.tags or []),
        metadata={k: str(v) for k, v in (document.document_metadata or {}).items()},
        timestamp=moment or datetime.now(UTC),
        context=context if isinstance(context, str) else None,
    )


def based_on_documents(memories: Iterable[Any] | None) -> list[str]:
    """The incident ids a reflect answer rests on, first mention first."""
    return list(dict.fromkeys(m.document_id for m in memories or [] if getattr(m, "document_id", None)))


def to_operation(status: Any) -> Operation:
    """An ``OperationStatusResponse`` as the bank's ``Operation`` (unknown states read as running)."""
    return Operation(
        id=status.operation_id,
        status=_STATUSES.get(status.status, "running"),
        kind=status.operation_type or status.task_type or "operation",
        target=status.mental_model_id,
        error=status.error_message,
        created_at=parse_time(status.created_at),
        finished_at=parse_time(status.completed_at),
    )


def to_mental_model(model: Any) -> MentalModel:
    return MentalModel(
        id=model.id,
        name=model.name,
        source_query=model.source_query or "",
        tags=list(model.tags or []),
        content=model.content or "",
        structured=None,
        last_refreshed_at=parse_time(model.last_refreshed_at),
    )


def parse_time(value: str | None) -> datetime | None:
    """Hindsight's ISO timestamps as aware UTC datetimes (a naive one is read as UTC)."""
    if not value:
        return None
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def directive_name(content: str) -> str:
    """A directive's display name: its first words."""
    words = content.split()
    return " ".join(words[:8]) + ("…" if len(words) > 8 else "")


def error_detail(body: Any) -> str:
    """The server's ``detail`` when it sent JSON, else the raw body, kept short for logs and pages."""
    if not body:
        return ""
    try:
        detail = json.loads(body).get("detail", body)
    except (ValueError, AttributeError):
        detail = body
    return str(detail)[:300]
