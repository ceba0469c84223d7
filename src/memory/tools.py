"""The two memory tools the agent and the resolution flow use, on top of any ``MemoryBank``.

``recall_similar_incidents`` scopes by service with ``any_strict`` (only that service's records; untagged
ones are excluded) or searches every service when no service is given. ``log_incident`` retains the
labeled record under its incident id, so writing the same incident again replaces it.
"""

from memory.bank import Budget, MemoryBank, RecalledIncident
from memory.schema import IncidentRecord, format_record, record_tags, service_tag


async def recall_similar_incidents(
    bank: MemoryBank,
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


async def log_incident(
    bank: MemoryBank,
    record: IncidentRecord,
    *,
    kind: str = "incident",
    severity: str | None = None,
    metadata: dict[str, str] | None = None,
) -> None:
    """Retain (upsert) the incident's labeled record with its tags, string metadata and timestamp."""
    meta = {"incident_id": record.incident_id, "service": record.service, "kind": kind}
    if severity:
        meta["severity"] = severity
    meta.update(metadata or {})
    await bank.retain(
        document_id=record.incident_id,
        content=format_record(record),
        tags=record_tags(record, kind=kind, severity=severity),
        metadata=meta,
        timestamp=record.timestamp,
        context=f"resolved {kind} of {record.service}",
    )
