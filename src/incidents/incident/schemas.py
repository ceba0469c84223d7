"""Read shapes of incidents for the API: what a dashboard or an automation sees."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from incidents.delivery.status import DeliveryLine


class AlertRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    source: str
    fingerprint: str
    status: str
    alertname: str
    service: str
    severity: str
    summary: str
    description: str
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: datetime
    ends_at: datetime | None
    generator_url: str | None
    runbook_url: str | None
    dedup_key: str | None
    received_at: datetime
    cleared: bool = False  # for a firing alert: a resolved notice for it has arrived


class EventRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: datetime
    kind: str
    actor: str
    message: str
    data: dict[str, Any]


class IncidentRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    title: str
    service: str
    alertname: str
    severity: str
    status: str
    dedup_key: str | None
    origin: str
    alert_count: int
    first_seen: datetime
    last_seen: datetime
    created_at: datetime
    updated_at: datetime
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    resolved_at: datetime | None
    resolved_by: str | None
    recurrence_of: str | None


class IncidentDetail(IncidentRead):
    active_alerts: int
    recurrences: list[str]
    alerts_total: int
    alerts: list[AlertRead]  # the newest ``alerts_limit`` of ``alerts_total``, oldest first
    timeline: list[EventRead]
    delivery: list[DeliveryLine] = Field(
        description="Per chat channel, where the incident's messages stand, as its page shows them"
    )


class IncidentPageRead(BaseModel):
    items: list[IncidentRead]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class AcknowledgeResult(BaseModel):
    changed: bool
    incident: IncidentRead
