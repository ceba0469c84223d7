"""Pydantic models of what each source sends: the edge where bad input becomes a named 4xx.

Label maps are bounded (how many entries, how long each key and value) through the validation
context, so the limits follow ``RECALLOPS_MAX_LABELS`` / ``RECALLOPS_MAX_LABEL_CHARS`` without
rebuilding models. Timestamps come out timezone-aware UTC; a naive one is read as UTC.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from incidents.time_input import plausible, written_out

MAX_ALERTS_PER_PAYLOAD = 1000
MAX_TEXT_CHARS = 65536


@dataclass(frozen=True)
class LabelLimits:
    max_labels: int = 64
    max_label_chars: int = 4096


def _limits(info: ValidationInfo) -> LabelLimits:
    context = info.context or {}
    limits = context.get("limits")
    return limits if isinstance(limits, LabelLimits) else LabelLimits()


def _check_count(count: int, limits: LabelLimits) -> None:
    if count > limits.max_labels:
        raise ValueError(f"{count} entries; at most {limits.max_labels} are accepted")


def _check_lengths(value: dict[str, str], limits: LabelLimits) -> None:
    for key, item in value.items():
        if len(key) > limits.max_label_chars or len(item) > limits.max_label_chars:
            raise ValueError(f"entry {key[:40]!r} is longer than {limits.max_label_chars} characters")


def _check_labels(value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
    limits = _limits(info)
    _check_count(len(value), limits)
    _check_lengths(value, limits)
    return value


# A PagerDuty payload's fields kept as labels, by label name and attribute.
_PD_LABEL_FIELDS = {"source": "source", "component": "component", "group": "group", "class": "class_"}


def pagerduty_labels(fields: dict[str, Any], details: dict[str, Any] | None) -> dict[str, str]:
    """The labels a PagerDuty payload makes: its naming fields, its severity, and every string-valued
    custom detail (the nested or numeric ones stay in the description)."""
    labels = {name: fields[attr] for name, attr in _PD_LABEL_FIELDS.items() if fields.get(attr)}
    if fields.get("severity"):
        labels["severity"] = fields["severity"]
    labels.update({key: value for key, value in (details or {}).items() if isinstance(value, str)})
    return labels


def _to_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("timestamp is out of range") from exc


def _unset_if_zero(value: datetime) -> datetime | None:
    """Go's zero time (``0001-01-01T00:00:00Z``, Alertmanager's ``endsAt`` of a firing alert) means
    "not set", not the first year of the era."""
    return None if value.year == 1 else value


def _ends_after_start(start: datetime | None, end: datetime | None, names: tuple[str, str]) -> None:
    if start is not None and end is not None and end < start:
        raise ValueError(f"{names[1]} {end.isoformat()} is before {names[0]} {start.isoformat()}")


LabelMap = Annotated[dict[str, str], AfterValidator(_check_labels)]
Timestamp = Annotated[datetime, BeforeValidator(written_out), AfterValidator(_to_utc)]
EndTime = Annotated[Timestamp, AfterValidator(_unset_if_zero)]
StartTime = Annotated[Timestamp, AfterValidator(plausible)]  # what lists sort by
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
# A value Grafana measured: a JSON number, never a string read as one ("NaN" would be stored as NaN).
Measured = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Name = Annotated[str, Field(max_length=255)]
# What names an alert (a title, PagerDuty's summary and source): blank or whitespace alone is a 422, not
# an incident without a name whose every such alert shares one fingerprint.
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1024)]
Source = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]


class _Open(BaseModel):
    """Senders add fields over time; unknown ones are kept in the raw payload, not rejected."""

    model_config = ConfigDict(extra="allow")


class AlertmanagerAlert(_Open):
    status: Literal["firing", "resolved"]
    labels: LabelMap
    annotations: LabelMap = Field(default_factory=dict)
    startsAt: StartTime
    endsAt: EndTime | None = None
    generatorURL: Text = ""
    fingerprint: Name = ""

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> "AlertmanagerAlert":
        _ends_after_start(self.startsAt, self.endsAt, ("startsAt", "endsAt"))
        return self


class _Webhook(_Open):
    """What Alertmanager and Grafana notifications share: the group and its labels."""

    groupKey: Text = ""
    truncatedAlerts: int = 0
    receiver: Text = ""
    status: Literal["firing", "resolved"]
    groupLabels: LabelMap = Field(default_factory=dict)
    commonLabels: LabelMap = Field(default_factory=dict)
    commonAnnotations: LabelMap = Field(default_factory=dict)
    externalURL: Text = ""


class AlertmanagerWebhook(_Webhook):
    """Prometheus Alertmanager webhook, version 4."""

    version: Literal["4"] = "4"
    alerts: list[AlertmanagerAlert] = Field(min_length=1, max_length=MAX_ALERTS_PER_PAYLOAD)


class GrafanaAlert(AlertmanagerAlert):
    silenceURL: Text = ""
    dashboardURL: Text = ""
    panelURL: Text = ""
    imageURL: Text = ""
    values: dict[str, Measured | None] | None = None
    valueString: Text = ""


class GrafanaWebhook(_Webhook):
    """Grafana unified alerting webhook contact point, version 1."""

    version: Literal["1"] = "1"
    orgId: int = 0
    state: Text = ""
    title: Text = ""
    message: Text = ""
    alerts: list[GrafanaAlert] = Field(min_length=1, max_length=MAX_ALERTS_PER_PAYLOAD)


class PagerDutyPayload(_Open):
    summary: Title
    source: Source
    severity: Literal["critical", "error", "warning", "info"]
    timestamp: StartTime | None = None
    component: Name | None = None
    group: Name | None = None
    class_: Name | None = Field(default=None, alias="class")
    custom_details: dict[str, Any] | None = None

    @field_validator("custom_details")
    @classmethod
    def _details_within_label_limits(
        cls, value: dict[str, Any] | None, info: ValidationInfo
    ) -> dict[str, Any] | None:
        """String details become labels, so they meet the label limits: counted with the payload's own
        fields, as they are stored together (those fields have lengths of their own)."""
        limits = _limits(info)
        _check_count(len(pagerduty_labels(info.data, value)), limits)
        _check_lengths(pagerduty_labels({}, value), limits)
        return value

    @property
    def labels(self) -> dict[str, str]:
        return pagerduty_labels(dict(self), self.custom_details)


class PagerDutyEvent(_Open):
    """PagerDuty Events API v2: ``trigger`` needs a payload, ``acknowledge``/``resolve`` a dedup key."""

    routing_key: str = Field(min_length=1, max_length=255)
    event_action: Literal["trigger", "acknowledge", "resolve"]
    dedup_key: str | None = Field(default=None, min_length=1, max_length=255)
    payload: PagerDutyPayload | None = None
    images: list[dict[str, Any]] | None = None
    links: list[dict[str, Any]] | None = None
    client: Text | None = None
    client_url: Text | None = None

    @model_validator(mode="after")
    def _action_needs(self) -> "PagerDutyEvent":
        if self.event_action == "trigger" and self.payload is None:
            raise ValueError("a trigger event needs 'payload' (summary, source, severity)")
        if self.event_action != "trigger" and not self.dedup_key:
            raise ValueError(f"an event with event_action {self.event_action!r} needs 'dedup_key'")
        return self


class GenericAlert(BaseModel):
    """RecallOps' own alert format, for senders with no native integration.

    Only ``title`` is required. ``service`` wins over labels; without both the alert is kept under
    ``unknown``. Without ``fingerprint`` one is derived from service, alert name and labels.
    """

    model_config = ConfigDict(extra="forbid")

    title: Title
    service: Name | None = None
    alertname: Name | None = None
    description: Text = ""
    severity: str | None = Field(default=None, max_length=32)
    status: Literal["firing", "resolved"] = "firing"
    labels: LabelMap = Field(default_factory=dict)
    annotations: LabelMap = Field(default_factory=dict)
    fingerprint: Name | None = None
    starts_at: StartTime | None = None
    ends_at: EndTime | None = None
    runbook_url: Text | None = None
    generator_url: Text | None = None

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> "GenericAlert":
        _ends_after_start(self.starts_at, self.ends_at, ("starts_at", "ends_at"))
        return self
