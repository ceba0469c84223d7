"""The labeled incident template: an API, so changing it is a migration."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class IncidentRecord:
    incident_id: str
    service: str
    timestamp: datetime
    symptom: str
    error_signature: str
    root_cause: str
    resolution_steps: str
    runbook_used: str
    outcome: str
    failed_attempts: str = ""
    resolved_by: str = ""


def service_tag(service: str) -> str:
    return f"service:{service}"


def kind_tag(kind: str) -> str:
    return f"kind:{kind}"


def severity_tag(severity: str) -> str:
    return f"severity:{severity}"
