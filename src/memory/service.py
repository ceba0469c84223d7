"""The one door to memory for routes, pages and flows: recall, retain, a record, the profile.

Everything above ``memory`` (``web`` and the flows it runs) reaches the bank through these functions
and the values re-exported here, so where memory is touched is one grep away. Each function asks
only for the role it needs (``Recall``, ``Retain``, ``ProfileModels``), so a test fake implements
that role and nothing more.

``recall_similar_incidents`` is the agent's own recall tool and the memory search alike: it scopes
by service with ``any_strict`` (only that service's records; untagged ones are excluded) or searches
every service when no service is given. ``log_incident`` retains the labeled record under its
incident id, so writing the same incident again replaces it.

Bulk loads (a history import, a replay of many incidents) build one ``incident_write`` per record and
hand a few hundred at a time to ``log_incidents``: the embedded driver then embeds the texts in
batches across records and commits once per call, instead of one embedding batch and one commit per
record. The progress of a long load is counted per call.

``copy_bank`` copies every document of one bank into another through the same roles, whatever the two
drivers are (``memory.transfer``): how a team moves its memory to a shared server.
"""

from collections.abc import Sequence

from memory.bank import (
    Admin,
    Budget,
    DocumentWrite,
    Health,
    MemoryBank,
    MemoryUnavailable,
    MentalModel,
    Operation,
    ProfileModels,
    Recall,
    RecalledIncident,
    Retain,
)
from memory.corrections import (
    CORRECTION_ID,
    CorrectionRecord,
    correction_metadata,
    correction_tags,
    format_correction,
)
from memory.embedder import Embedder
from memory.extraction.document import SourceDocument
from memory.extraction.readers import FileRead, collect, is_labeled_history, read_bytes, read_files
from memory.history import (
    HistoryRow,
    Rejected,
    Rejections,
    Runbook,
    UnreadableImport,
    describe,
    parse_body,
    parse_rows,
    validate_items,
)
from memory.profile import (
    FIELD_LABELS,
    PATTERN_FIELDS,
    PROFILE_ID,
    PROFILE_NAME,
    SOURCE_QUERY,
    Pattern,
    load_patterns,
    service_model_id,
    service_model_name,
    service_model_tags,
)
from memory.recurrence import Recurrence, recurrence
from memory.schema import (
    FIELDS,
    RESOLUTION_KIND_LABELS,
    IncidentRecord,
    format_record,
    kind_tag,
    record_tags,
    service_tag,
    tag_value,
)
from memory.settings import MemorySettings
from memory.template import POST_MORTEM
from memory.transfer import CopyReport, copy_bank, document_line

__all__ = [
    "CORRECTION_ID",
    "FIELDS",
    "FIELD_LABELS",
    "PATTERN_FIELDS",
    "POST_MORTEM",
    "PROFILE_ID",
    "PROFILE_NAME",
    "RESOLUTION_KIND_LABELS",
    "SOURCE_QUERY",
    "Admin",
    "CopyReport",
    "CorrectionRecord",
    "DocumentWrite",
    "Embedder",
    "FileRead",
    "Health",
    "HistoryRow",
    "IncidentRecord",
    "MemoryBank",
    "MemorySettings",
    "MemoryUnavailable",
    "MentalModel",
    "Operation",
    "Pattern",
    "ProfileModels",
    "Recall",
    "RecalledIncident",
    "Recurrence",
    "Rejected",
    "Rejections",
    "Retain",
    "Runbook",
    "SourceDocument",
    "UnreadableImport",
    "collect",
    "copy_bank",
    "describe",
    "document_line",
    "format_record",
    "get_record",
    "incident_write",
    "is_labeled_history",
    "kind_tag",
    "load_patterns",
    "log_correction",
    "log_incident",
    "log_incidents",
    "log_runbook",
    "parse_body",
    "parse_rows",
    "read_bytes",
    "read_files",
    "recall_similar_incidents",
    "recurrence",
    "refresh_profile",
    "service_model_id",
    "service_model_name",
    "service_model_tags",
    "start_loading_embedder",
    "tag_value",
    "validate_items",
]


def start_loading_embedder() -> None:
    """Start loading the process's sentence embedder (``memory.factory.open_embedder``) on another
    thread, for a command that will embed once it has imported the rest of the service: the model
    loads on the other core meanwhile."""
    from memory.factory import open_embedder

    open_embedder().load_in_background()


# How many recalled incidents ``get_record`` looks through for the one whose id it was asked.
RECORD_LOOKUP_LIMIT = 5


async def recall_similar_incidents(
    bank: Recall,
    alert_description: str,
    service: str | None = None,
    limit: int = 3,
    *,
    budget: Budget = "mid",
) -> list[RecalledIncident]:
    """Up to ``limit`` incidents (not facts) resembling the alert, best first."""
    if service:
        return await bank.recall(
            query=alert_description,
            tags=[service_tag(service)],
            tags_match="any_strict",
            budget=budget,
            limit=limit,
        )
    return await bank.recall(query=alert_description, budget=budget, limit=limit)


async def get_record(bank: Recall, incident_id: str) -> RecalledIncident | None:
    """The record memory holds under ``incident_id`` (an id known only to a shared bank), if any."""
    recalled = await recall_similar_incidents(bank, incident_id, limit=RECORD_LOOKUP_LIMIT)
    return next((r for r in recalled if r.id == incident_id), None)


def incident_write(
    record: IncidentRecord,
    *,
    kind: str = "incident",
    severity: str | None = None,
    metadata: dict[str, str] | None = None,
) -> DocumentWrite:
    """The document an incident's labeled record is retained as: its text, tags, string metadata
    (``metadata`` adds to the incident id, service, kind and severity) and timestamp."""
    meta = {"incident_id": record.incident_id, "service": record.service, "kind": kind}
    if severity:
        meta["severity"] = severity
    meta.update(metadata or {})
    return DocumentWrite(
        document_id=record.incident_id,
        content=format_record(record),
        tags=record_tags(record, kind=kind, severity=severity),
        metadata=meta,
        timestamp=record.timestamp,
        context=f"resolved {kind} of {record.service}",
    )


async def log_incident(
    bank: Retain,
    record: IncidentRecord,
    *,
    kind: str = "incident",
    severity: str | None = None,
    metadata: dict[str, str] | None = None,
) -> None:
    """Retain (upsert) the incident's labeled record under its incident id."""
    write = incident_write(record, kind=kind, severity=severity, metadata=metadata)
    await bank.retain(
        document_id=write.document_id,
        content=write.content,
        tags=write.tags,
        metadata=write.metadata,
        timestamp=write.timestamp,
        context=write.context,
    )


async def log_incidents(bank: Retain, writes: Sequence[DocumentWrite]) -> None:
    """Retain many records in one call (each from ``incident_write``), replacing any under the same id.

    The bulk form of ``log_incident`` for imports and replays: pass a few hundred writes per call
    (each call is one embedding pass and one commit on the embedded driver; Hindsight takes them one
    by one). Every write is checked before any is stored; ``MemoryUnavailable`` means none or only
    some of this call's writes landed, and calling again with the same writes repairs it.
    """
    await bank.retain_many(writes)


async def log_correction(bank: Retain, record: CorrectionRecord, *, severity: str | None = None) -> None:
    """Retain a correction as a record of its own, which recall puts ahead of the incident it amends."""
    await bank.retain(
        document_id=record.document_id,
        content=format_correction(record),
        tags=correction_tags(record, severity=severity),
        metadata=correction_metadata(record),
        timestamp=record.timestamp,
        context=f"correction of incident {record.corrects} on {record.service}",
    )


async def log_runbook(bank: Retain, runbook: Runbook) -> None:
    """Retain a runbook under its id, tagged with its service and ``kind:runbook``."""
    await bank.retain(
        document_id=runbook.runbook_id,
        content=runbook.text(),
        tags=[service_tag(runbook.service), kind_tag("runbook")],
        metadata={"runbook_id": runbook.runbook_id, "service": runbook.service, "title": runbook.title},
        timestamp=runbook.timestamp(),
        context=f"runbook of {runbook.service}",
    )


async def refresh_profile(bank: ProfileModels, *, service: str | None) -> Operation:
    """Refresh the team's (``service=None``) or one service's profile, creating it first if it is
    missing; the operation runs in the bank, poll it with ``bank.get_operation``."""
    model_id = service_model_id(service) if service else PROFILE_ID
    if await bank.get_mental_model(model_id) is None:
        return await bank.create_mental_model(
            model_id=model_id,
            name=service_model_name(service) if service else PROFILE_NAME,
            source_query=SOURCE_QUERY,
            tags=service_model_tags(service) if service else [],
        )
    return await bank.refresh_mental_model(model_id)
