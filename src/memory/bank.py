"""The memory bank's roles (recall, retain, export, profile models, admin), and the values they speak in.

A driver implements ``MemoryBank``, every role; a caller, or a test fake, needs only the role it uses.

Recall answers with incidents, one per document, never with loose facts: ``limit=3`` means three
incidents. Every driver raises ``MemoryUnavailable`` (and nothing else) when the store cannot be
reached in time, so callers degrade in one place.
"""

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np

from memory.schema import IncidentRecord

TagsMatch = Literal["any", "any_strict", "all", "all_strict", "exact"]
Budget = Literal["low", "mid", "high"]
UpdateMode = Literal["replace", "append"]
OperationStatus = Literal["pending", "running", "completed", "failed"]


class MemoryUnavailable(Exception):
    """The memory layer could not be reached or did not answer in time."""


@dataclass(frozen=True)
class RecalledIncident:
    id: str
    text: str
    record: IncidentRecord | None
    score: float
    why: dict[str, int]  # channel name -> 1-based rank in that channel
    tags: list[str]
    metadata: dict[str, str]
    timestamp: datetime | None


@dataclass(frozen=True)
class ReflectAnswer:
    text: str
    structured: dict[str, Any] | None = None
    based_on: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MentalModel:
    id: str
    name: str
    source_query: str
    tags: list[str]
    content: str
    structured: dict[str, Any] | None
    last_refreshed_at: datetime | None


@dataclass(frozen=True)
class Operation:
    id: str
    status: OperationStatus
    kind: str
    target: str | None = None
    error: str | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True)
class BankConfig:
    mission: str
    directives: list[str]
    dispositions: dict[str, int]


@dataclass(frozen=True)
class Health:
    ok: bool
    driver: str
    detail: str
    documents: int | None = None
    last_memory_seen_at: datetime | None = None


@dataclass(frozen=True)
class DocumentWrite:
    """One document to retain (replace mode): what ``Retain.retain_many`` takes a list of."""

    document_id: str
    content: str
    tags: list[str]
    metadata: dict[str, str]
    timestamp: datetime
    context: str | None = None


def check_retain(*, document_id: str, timestamp: datetime, metadata: Mapping[str, object]) -> None:
    """What every driver refuses before a write, so a bad record fails the same way on either."""
    if not document_id:
        raise ValueError("document_id is required: without it a re-import would duplicate records")
    if timestamp.tzinfo is None:
        raise ValueError("timestamp must be timezone-aware")
    bad = [k for k, v in metadata.items() if not isinstance(v, str)]
    if bad:
        raise ValueError(f"metadata values must be strings: {', '.join(bad)}")


class Recall(Protocol):
    """Reads: the incidents resembling a query, and an answer synthesized over them."""

    driver: str

    @property
    def ranking_model(self) -> str:
        """What ranks recall results (driver and embedding model): a confidence fit is only valid for it."""
        return self.driver

    @abstractmethod
    async def recall(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        limit: int = 5,
    ) -> list[RecalledIncident]: ...

    @abstractmethod
    async def reflect(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer: ...


class Retain(Protocol):
    """The one write, upsert a document under its id, and what a writer checks first."""

    @abstractmethod
    async def retain(
        self,
        *,
        document_id: str,
        content: str,
        tags: list[str],
        metadata: dict[str, str],
        timestamp: datetime,
        context: str | None = None,
        update_mode: UpdateMode = "replace",
    ) -> None: ...

    async def retain_many(self, writes: Sequence[DocumentWrite]) -> None:
        """Retain (replace) many documents in one call: the door for bulk loads (imports, replays).

        Each write is checked as ``retain`` checks it, all before any is stored. A driver that can
        batches the work: the embedded one embeds every text of the call in batches across documents
        and commits them in one transaction. This default retains them one by one, in order.
        """
        for write in writes:
            check_retain(document_id=write.document_id, timestamp=write.timestamp, metadata=write.metadata)
        for write in writes:
            await self.retain(
                document_id=write.document_id,
                content=write.content,
                tags=write.tags,
                metadata=write.metadata,
                timestamp=write.timestamp,
                context=write.context,
            )

    @abstractmethod
    async def stored_tags(self, document_id: str) -> list[str] | None:
        """The tags of the document stored under this id, or ``None`` when there is none.

        Lets a writer check what an id already holds (an import must not turn a runbook or a
        correction into an incident record)."""


class Export(Protocol):
    """Every document read back as it was written: what copying one bank into another reads.

    A document comes back as the write that stores it again (text, tags, metadata, timestamp and
    context), so a copy keeps each record's id, and a precedent a stored briefing cites still resolves.
    Reading never creates the bank it reads.
    """

    @abstractmethod
    async def document_ids(self) -> list[str]:
        """Every document id the bank holds (incidents, corrections, runbooks), sorted."""

    @abstractmethod
    async def document(self, document_id: str) -> DocumentWrite | None:
        """The document stored under this id, or ``None`` when there is none."""


class ProfileModels(Protocol):
    """Mental models (the reliability profiles) and the asynchronous operations that refresh them."""

    @abstractmethod
    async def create_mental_model(
        self, *, model_id: str, name: str, source_query: str, tags: list[str] | None = None
    ) -> Operation: ...

    @abstractmethod
    async def get_mental_model(self, model_id: str) -> MentalModel | None: ...

    @abstractmethod
    async def list_mental_models(self) -> list[MentalModel]: ...

    @abstractmethod
    async def refresh_mental_model(self, model_id: str) -> Operation: ...

    @abstractmethod
    async def get_operation(self, operation_id: str) -> Operation | None: ...


class Admin(Protocol):
    """The bank itself: its configuration, its health, and closing it."""

    driver: str

    @abstractmethod
    async def configure(self, config: BankConfig) -> None: ...

    @abstractmethod
    async def get_config(self) -> BankConfig: ...

    @abstractmethod
    async def health(self) -> Health: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def release_loop(self) -> None:
        """Close what the running event loop holds (an HTTP session), before that loop closes: a worker
        lane's loop ends before ``close`` runs on another. The bank stays open for every other loop."""


class ItemVectors(Protocol):
    """The vectors of retained records' items (``memory.items``), computed when they were retained."""

    @abstractmethod
    def item_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each text that is an item of a retained record (others are left out).

        Blocking, and never raises: a bank that cannot answer returns nothing, and the caller embeds.
        """


class MemoryBank(Recall, Retain, Export, ProfileModels, Admin, ItemVectors, Protocol):
    """Every role: what a driver implements. One company bank; every record tagged (``service:``,
    ``kind:``, ``severity:``). Callers ask for the narrowest role they use."""
