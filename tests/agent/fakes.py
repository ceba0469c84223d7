"""Fakes of the memory roles the agent's unit tests need, one a role: word-overlap recall, the profile's
mental models, and a recall that also watches for writes. Nothing else clever. Also the records and
evidence matches the tests build."""

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from agent.core.confidence import Confidence, band
from agent.core.evidence import Evidence, Match
from agent.core.schema import EvidenceItem
from memory import (
    IncidentRecord,
    MemoryUnavailable,
    MentalModel,
    Operation,
    RecalledIncident,
    ReflectAnswer,
)
from memory.bank import ProfileModels, Recall, Retain
from memory.corrections import CorrectionRecord, format_correction
from memory.profile import PROFILE_ID
from memory.schema import format_record, parse_record, record_tags

WORD = re.compile(r"\w+")


def record(
    incident_id: str,
    service: str = "checkout-service",
    *,
    symptom: str = "checkout requests failing with 500s",
    error_signature: str = "FATAL: remaining connection slots are reserved",
    root_cause: str = "connection pool sized for average load",
    resolution_steps: str = "1. Check pool metrics\n2. Raise the pool size to 50\n3. Add a circuit breaker",
    runbook_used: str = "runbooks/db-pool.md",
    outcome: str = "Recovered in 20 minutes",
    failed_attempts: str = "Adding app replicas without checking database max_connections made it worse",
) -> IncidentRecord:
    return IncidentRecord(
        incident_id=incident_id,
        service=service,
        timestamp=datetime(2026, 3, 14, 9, 12, tzinfo=UTC),
        symptom=symptom,
        error_signature=error_signature,
        root_cause=root_cause,
        resolution_steps=resolution_steps,
        runbook_used=runbook_used,
        outcome=outcome,
        failed_attempts=failed_attempts,
        resolved_by="dana",
    )


def match(rec: IncidentRecord, probability: float, n: int) -> Match:
    """``rec`` as evidence item ``n`` on the alert's service, with this calibrated probability."""
    recalled = RecalledIncident(rec.incident_id, format_record(rec), rec, 0.5, {}, [], {}, rec.timestamp)
    item = EvidenceItem(n=n, kind="incident", id=rec.incident_id, title=rec.incident_id, text="")
    sure = Confidence(probability=probability, band=band(probability), calibrated=True)
    return Match(incident=recalled, item=item, same_service=True, confidence=sure)


def with_matches(evidence: Evidence, *found: Match, cited: bool = True) -> Evidence:
    """``evidence`` with these matches (and, when ``cited``, their items) added as they are."""
    items = tuple(m.item for m in found) if cited else ()
    matches = {**evidence.matches, **{m.incident.id: m for m in found}}
    return replace(evidence, items=evidence.items + items, matches=matches)


@dataclass
class Doc:
    document_id: str
    content: str
    tags: list[str]
    metadata: dict[str, str]
    timestamp: datetime


@dataclass
class _Documents:
    """What a fake holds: documents by id, and whether memory is down (every call then raises)."""

    docs: dict[str, Doc] = field(default_factory=dict)
    down: bool = False

    def add(self, rec: IncidentRecord) -> None:
        self.docs[rec.incident_id] = Doc(
            rec.incident_id, format_record(rec), record_tags(rec), {}, rec.timestamp
        )

    def add_correction(self, corrects: str, service: str, text: str) -> None:
        doc_id = f"{corrects}-correction-1"
        content = format_correction(
            CorrectionRecord(doc_id, corrects, service, datetime(2026, 4, 1, tzinfo=UTC), text, "lee")
        )
        self.docs[corrects].metadata["corrections"] = doc_id
        self.docs[doc_id] = Doc(
            doc_id,
            content,
            [f"service:{service}", "kind:correction"],
            {"corrects": corrects},
            datetime(2026, 4, 1, tzinfo=UTC),
        )

    def _check(self) -> None:
        if self.down:
            raise MemoryUnavailable("connection refused")


@dataclass
class FakeRecall(_Documents, Recall):
    """The recall role alone: word-overlap recall over the documents, and every call remembered."""

    driver: str = "fake"
    recalls: list[dict[str, Any]] = field(default_factory=list)

    async def recall(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: str = "any",
        budget: str = "mid",
        limit: int = 5,
    ) -> list[RecalledIncident]:
        self._check()
        self.recalls.append({"query": query, "tags": tags, "tags_match": tags_match, "limit": limit})
        words = set(WORD.findall(query.lower()))
        scored = []
        for doc in self.docs.values():
            if tags and not set(tags) <= set(doc.tags):
                continue
            overlap = len(words & set(WORD.findall(doc.content.lower())))
            if overlap:
                scored.append((overlap, doc))
        scored.sort(key=lambda pair: -pair[0])
        out = []
        for rank, (overlap, doc) in enumerate(scored[:limit], 1):
            try:
                parsed = parse_record(doc.content)
            except ValueError:
                parsed = None
            out.append(
                RecalledIncident(
                    id=doc.document_id,
                    text=doc.content,
                    record=parsed,
                    score=overlap / 100,
                    why={"keyword": rank, "semantic": rank},
                    tags=doc.tags,
                    metadata=doc.metadata,
                    timestamp=doc.timestamp,
                )
            )
        return out

    async def reflect(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: str = "any",
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        found = await self.recall(query=query, tags=tags, tags_match=tags_match, limit=3)
        return ReflectAnswer(text=f"{len(found)} related incidents", based_on=[f.id for f in found])


@dataclass
class WatchedRecall(FakeRecall, Retain):
    """Recall that also takes writes and keeps their ids in ``retained``: a test hands the agent this
    and proves it wrote nothing, even through a bank that would have let it."""

    retained: list[str] = field(default_factory=list)

    async def retain(
        self,
        *,
        document_id: str,
        content: str,
        tags: list[str],
        metadata: dict[str, str],
        timestamp: datetime,
        context: str | None = None,
        update_mode: str = "replace",
    ) -> None:
        self._check()
        self.retained.append(document_id)
        self.docs[document_id] = Doc(document_id, content, tags, metadata, timestamp)

    async def stored_tags(self, document_id: str) -> list[str] | None:
        self._check()
        doc = self.docs.get(document_id)
        return None if doc is None else list(doc.tags)


@dataclass
class FakeProfiles(ProfileModels):
    """The profile role alone: mental models by id; a created or refreshed one is done at once."""

    models: dict[str, MentalModel] = field(default_factory=dict)
    operations: dict[str, Operation] = field(default_factory=dict)
    down: bool = False

    def _done(self, kind: str, target: str) -> Operation:
        if self.down:
            raise MemoryUnavailable("connection refused")
        operation = Operation(
            id=f"op-{len(self.operations) + 1}", status="completed", kind=kind, target=target
        )
        self.operations[operation.id] = operation
        return operation

    async def create_mental_model(
        self, *, model_id: str, name: str, source_query: str, tags: list[str] | None = None
    ) -> Operation:
        operation = self._done("create", model_id)
        self.models[model_id] = MentalModel(
            id=model_id,
            name=name,
            source_query=source_query,
            tags=list(tags or []),
            content="",
            structured=None,
            last_refreshed_at=None,
        )
        return operation

    async def get_mental_model(self, model_id: str) -> MentalModel | None:
        if self.down:
            raise MemoryUnavailable("connection refused")
        return self.models.get(model_id)

    async def list_mental_models(self) -> list[MentalModel]:
        return list(self.models.values())

    async def refresh_mental_model(self, model_id: str) -> Operation:
        return self._done("refresh", model_id)

    async def get_operation(self, operation_id: str) -> Operation | None:
        return self.operations.get(operation_id)


def profile_model() -> MentalModel:
    pattern = {
        "id": "pattern-1",
        "title": "Database connection slots exhausted under burst",
        "incidents": ["INC-0001"],
        "uncertain": False,
        "services": ["checkout-service"],
        "early_warning_signals": [
            {"text": "remaining connection slots are reserved", "citations": ["INC-0001"]}
        ],
        "risky_actions": [
            {"text": "Scaling app replicas before checking max_connections", "citations": ["INC-0001"]}
        ],
        "first_checks": [
            {"text": "Compare active connections with max_connections", "citations": ["INC-0001"]}
        ],
    }
    return MentalModel(
        id=PROFILE_ID,
        name="profile",
        source_query="q",
        tags=[],
        content="",
        structured={"patterns": [pattern]},
        last_refreshed_at=datetime(2026, 4, 1, tzinfo=UTC),
    )
