"""Source payload -> normalized alerts. Pure functions: no database, no clock except PagerDuty's dedup key.

Each adapter receives the validated model and the raw JSON it came from; every normalized alert keeps
a raw payload that is itself a valid single-alert payload of its source, so it can be replayed.
"""

import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from incidents.alerts.normalized import (
    NormalizedAlert,
    clip,
    labelled_severity,
    service_from,
    severity_from,
)
from incidents.alerts.schemas import (
    AlertmanagerAlert,
    AlertmanagerWebhook,
    GenericAlert,
    GrafanaWebhook,
    PagerDutyEvent,
)

Adapter = Callable[[Any, dict[str, Any], Sequence[str]], list[NormalizedAlert]]

PD_STATUS = {"trigger": "firing", "acknowledge": "acknowledged", "resolve": "resolved"}


def _label_fingerprint(*parts: object) -> str:
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def _filled(*texts: str) -> str:
    """The first text with more than whitespace in it: a blank summary (or Grafana title) says nothing,
    so the next one stands in for it, as for a missing one, down to the alert name."""
    return next((text for text in texts if text.strip()), "")


def _webhook_alert(
    source: str,
    alert: AlertmanagerAlert,
    raw: dict[str, Any],
    raw_alert: dict[str, Any],
    service_labels: Sequence[str],
    *,
    fallback_summary: str = "",
    fallback_description: str = "",
) -> NormalizedAlert:
    labels, annotations = alert.labels, alert.annotations
    alertname = clip(labels.get("alertname", "")) or clip(annotations.get("summary", "")) or "unnamed"
    return NormalizedAlert(
        source=source,
        fingerprint=clip(alert.fingerprint) or _label_fingerprint(labels),
        status=alert.status,
        alertname=alertname,
        service=service_from(labels, service_labels),
        severity=labelled_severity(labels),
        summary=_filled(annotations.get("summary", ""), fallback_summary, alertname),
        description=_filled(annotations.get("description", ""), fallback_description),
        labels=dict(labels),
        annotations=dict(annotations),
        starts_at=alert.startsAt,
        ends_at=alert.endsAt,
        generator_url=alert.generatorURL or None,
        runbook_url=annotations.get("runbook_url") or annotations.get("runbook") or None,
        dedup_key=None,
        raw={**{k: v for k, v in raw.items() if k != "alerts"}, "alerts": [raw_alert]},
    )


def from_alertmanager(
    body: AlertmanagerWebhook, raw: dict[str, Any], service_labels: Sequence[str]
) -> list[NormalizedAlert]:
    """Each alert's own status counts: a group stays ``firing`` while resolved alerts ride inside it."""
    return [
        _webhook_alert("alertmanager", alert, raw, raw["alerts"][i], service_labels)
        for i, alert in enumerate(body.alerts)
    ]


def from_grafana(
    body: GrafanaWebhook, raw: dict[str, Any], service_labels: Sequence[str]
) -> list[NormalizedAlert]:
    alerts: list[NormalizedAlert] = []
    for i, alert in enumerate(body.alerts):
        alerts.append(
            _webhook_alert(
                "grafana",
                alert,
                raw,
                raw["alerts"][i],
                service_labels,
                fallback_summary=body.title,
                fallback_description=alert.valueString,
            )
        )
    return alerts


def from_pagerduty(
    event: PagerDutyEvent, raw: dict[str, Any], service_labels: Sequence[str]
) -> list[NormalizedAlert]:
    """Trigger, acknowledge and resolve all key on ``dedup_key``; a trigger without one gets a fresh key,
    as PagerDuty does. The service is the first configured label found, else the payload's ``source``."""
    dedup_key = event.dedup_key or uuid.uuid4().hex
    payload = event.payload
    labels: dict[str, str] = {}
    summary, severity, description = f"{event.event_action} {dedup_key}", None, ""
    starts_at = None
    if payload is not None:
        labels = payload.labels
        summary, severity, starts_at = payload.summary, payload.severity, payload.timestamp
        if payload.custom_details:
            description = json.dumps(payload.custom_details, sort_keys=True, ensure_ascii=False)
    service = service_from(labels, service_labels)
    if service == "unknown" and payload is not None:
        service = clip(payload.source)
    links = [link.get("href") for link in event.links or [] if isinstance(link.get("href"), str)]
    return [
        NormalizedAlert(
            source="pagerduty",
            fingerprint=dedup_key,
            status=PD_STATUS[event.event_action],  # type: ignore[arg-type]
            alertname=clip(payload.class_ or payload.summary) if payload else clip(dedup_key),
            service=service,
            severity=severity_from(severity),
            summary=summary,
            description=description,
            labels=labels,
            annotations={},
            starts_at=starts_at,
            ends_at=None,
            generator_url=event.client_url or None,
            runbook_url=links[0] if links else None,
            dedup_key=dedup_key,
            raw={**raw, "dedup_key": dedup_key},
        )
    ]


def from_generic(
    alert: GenericAlert, raw: dict[str, Any], service_labels: Sequence[str]
) -> list[NormalizedAlert]:
    labels = dict(alert.labels)
    service = clip(alert.service or "") or service_from(labels, service_labels)
    alertname = clip(alert.alertname or labels.get("alertname", "") or alert.title)
    return [
        NormalizedAlert(
            source="generic",
            fingerprint=alert.fingerprint or _label_fingerprint(service, alertname, labels),
            status=alert.status,
            alertname=alertname,
            service=service,
            severity=labelled_severity(labels, alert.severity),
            summary=alert.title,
            description=alert.description,
            labels=labels,
            annotations=dict(alert.annotations),
            starts_at=alert.starts_at,
            ends_at=alert.ends_at,
            generator_url=alert.generator_url or None,
            runbook_url=alert.runbook_url or alert.annotations.get("runbook_url") or None,
            dedup_key=None,
            raw=raw,
        )
    ]


SOURCES: dict[str, tuple[type[BaseModel], Adapter]] = {
    "alertmanager": (AlertmanagerWebhook, from_alertmanager),
    "grafana": (GrafanaWebhook, from_grafana),
    "pagerduty": (PagerDutyEvent, from_pagerduty),
    "generic": (GenericAlert, from_generic),
}
