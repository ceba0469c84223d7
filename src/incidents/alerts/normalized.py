"""The one shape every source is mapped to before anything is stored.

Adapters are pure functions from a validated payload to ``NormalizedAlert`` values, so each source's
quirks (PagerDuty's actions, Grafana's extras) stay in its adapter and the intake service sees one
vocabulary; what a value means whatever the source (Go's zero time as "no end") is read in the schemas.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from incidents.severity import level_of

AlertStatus = Literal["firing", "resolved", "acknowledged"]

SERVICE_UNKNOWN = "unknown"
SEVERITY_UNKNOWN = "unknown"
NAME_CHARS = 255  # width of the service, alert name, fingerprint and dedup key columns
SEVERITY_CHARS = 32


@dataclass(frozen=True)
class NormalizedAlert:
    """An alert as RecallOps understands it, whatever sent it.

    ``starts_at`` is ``None`` when the source gave no start time (PagerDuty, a generic alert without
    ``starts_at``): intake then anchors it to the episode already open for the same fingerprint, so a
    repeated event is recognised as the same one.
    """

    source: str
    fingerprint: str
    status: AlertStatus
    alertname: str
    service: str
    severity: str
    summary: str
    description: str
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: datetime | None
    ends_at: datetime | None
    generator_url: str | None
    runbook_url: str | None
    dedup_key: str | None
    raw: dict[str, Any] = field(repr=False)


def service_from(labels: Mapping[str, str], service_labels: Sequence[str]) -> str:
    """The first non-empty configured label; ``unknown`` keeps the alert rather than dropping it."""
    for name in service_labels:
        value = labels.get(name, "").strip()
        if value:
            return value[:NAME_CHARS]
    return SERVICE_UNKNOWN


def severity_from(value: str | None) -> str:
    """The severity as the alert spelled it (``P1`` stays ``P1``), trimmed: comparisons read it through
    ``incidents.severity``, which ignores case, so nothing needs it lower-cased."""
    cleaned = (value or "").strip()
    return cleaned[:SEVERITY_CHARS] if cleaned else SEVERITY_UNKNOWN


def labelled_severity(labels: Mapping[str, str], given: str | None = None) -> str:
    """The severity an alert was sent with: ``given`` (a format's own field), else its ``severity``
    label, else its ``priority`` label when that names a level (rules that page through Opsgenie or
    PagerDuty often carry ``priority: P1`` and no severity); a priority that is no level (a number,
    a team's word) says nothing about urgency, so the alert's severity is then unknown."""
    sent = next((value for value in (given, labels.get("severity")) if value and value.strip()), None)
    if sent is None and level_of(labels.get("priority", "")) is not None:
        sent = labels["priority"]
    return severity_from(sent)


def clip(value: str, limit: int = NAME_CHARS) -> str:
    return value.strip()[:limit]
