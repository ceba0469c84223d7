"""The labeled incident template: an API, so changing it is a migration.

The fields, their labels and their order come from ``memory.template.FIELDS``.

A record renders as one header line and one ``Label: value`` block per field, always all of them, in
the order of ``FIELDS``::

    INCIDENT INC-0042 — checkout-service
    Timestamp: 2026-03-14T09:12:00+00:00
    Symptom: p99 latency over 4 s on /checkout
      continuation lines of a multi-line value are indented by two spaces
    ...
    Resolved by: dana

Template versions: version 2 added ``Resolution kind`` (after ``Outcome``). A version-1 record, which
has no such line, still parses, with the kind not recorded (``""``); it is written back in version 2
the next time it is retained. The kind says what kind of ending the incident had, so a briefing can tell
a fault that needed a fix from an alert that cleared on its own.

Why this encoding is unambiguous: a line that does not start with two spaces is a field line, and the
field lines must appear in the fixed order, so text inside a value that looks like a label (``Root
cause: ...`` on its own line) is indented and stays part of the value. Only ``\\n`` separates lines;
every other character, including ``\\r`` and unicode separators, is carried verbatim.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from memory.settings import MemorySettings
from memory.template import FIELDS as TEMPLATE_FIELDS
from memory.template import RESOLUTION_KINDS

INDENT = "  "
HEADER_PREFIX = "INCIDENT "
HEADER_SEPARATOR = " — "
# (attribute, label) in the record's order, from the one field list.
FIELDS: tuple[tuple[str, str], ...] = tuple((f.name, f.label) for f in TEMPLATE_FIELDS)
# Fields a record of an older template version lacks; they parse as not recorded.
ADDED_IN_V2 = frozenset(f.name for f in TEMPLATE_FIELDS if f.since_version == 2)
# Noise kinds are alerts that needed nothing: the past says "it clears on its own".
NOISE_KINDS = frozenset({"self-recovered", "false-alarm"})
RESOLUTION_KIND_LABELS = {
    "fixed": "fixed",
    "mitigated": "mitigated",
    "self-recovered": "self-recovered",
    "false-alarm": "false alarm",
    "duplicate": "duplicate",
}
_INCIDENT_ID = re.compile(r"\S+")
_BANK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class RecordFormatError(ValueError):
    """Text that is not a labeled incident record."""


@dataclass(frozen=True)
class IncidentRecord:
    """One resolved incident. ``incident_id`` has no whitespace; ``service`` is one line.

    Its template attributes are the names of ``memory.template.FIELDS`` (a test holds them equal);
    they are spelled out so every reader of a record is type-checked."""

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
    resolution_kind: str = ""  # one of RESOLUTION_KINDS, or "" when not recorded

    @property
    def noise(self) -> bool:
        """The alert needed nothing: it self-recovered or was a false alarm."""
        return self.resolution_kind in NOISE_KINDS

    def __post_init__(self) -> None:
        if not _INCIDENT_ID.fullmatch(self.incident_id):
            raise ValueError(f"incident_id must be non-empty without whitespace: {self.incident_id!r}")
        if not self.service or "\n" in self.service:
            raise ValueError(f"service must be one non-empty line: {self.service!r}")
        if self.timestamp.tzinfo is None:
            raise ValueError("timestamp must be timezone-aware")
        if self.resolution_kind and self.resolution_kind not in RESOLUTION_KINDS:
            raise ValueError(f"resolution_kind must be one of {', '.join(RESOLUTION_KINDS)} or empty")


def format_record(record: IncidentRecord) -> str:
    """Render the labeled template (no trailing newline)."""
    lines = [f"{HEADER_PREFIX}{record.incident_id}{HEADER_SEPARATOR}{record.service}"]
    for attr, label in FIELDS:
        value = getattr(record, attr)
        text = value.isoformat() if isinstance(value, datetime) else value
        first, *rest = text.split("\n")
        lines.append(f"{label}: {first}" if first else f"{label}:")
        lines.extend(INDENT + line for line in rest)
    return "\n".join(lines)


def parse_record(text: str) -> IncidentRecord:
    """Inverse of ``format_record``; raises ``RecordFormatError`` on anything else."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # one trailing newline added by an editor or a transport
    header = lines[0]
    if not header.startswith(HEADER_PREFIX) or HEADER_SEPARATOR not in header:
        raise RecordFormatError(f"not an incident header: {header[:80]!r}")
    incident_id, service = header[len(HEADER_PREFIX) :].split(HEADER_SEPARATOR, 1)
    values: dict[str, list[str]] = {}
    fields = iter(FIELDS)
    current: list[str] | None = None
    for line in lines[1:]:
        if line.startswith(INDENT):
            if current is None:
                raise RecordFormatError("continuation line before the first field")
            current.append(line[len(INDENT) :])
            continue
        attr, label = _next_field(fields, line)
        rest = line[len(label) + 1 :]
        current = values[attr] = [rest[1:] if rest.startswith(" ") else rest]
    missing = [label for attr, label in FIELDS if attr not in values and attr not in ADDED_IN_V2]
    if missing:
        raise RecordFormatError(f"missing fields: {', '.join(missing)}")
    joined = {attr: "\n".join(parts) for attr, parts in values.items()}
    try:
        timestamp = datetime.fromisoformat(joined.pop("timestamp"))
        return IncidentRecord(incident_id=incident_id, service=service, timestamp=timestamp, **joined)
    except ValueError as exc:
        raise RecordFormatError(str(exc)) from exc


def _next_field(fields: Iterator[tuple[str, str]], line: str) -> tuple[str, str]:
    for attr, label in fields:
        if line == f"{label}:" or line.startswith(f"{label}: "):
            return attr, label
    raise RecordFormatError(f"unexpected line (fields are fixed and ordered): {line[:80]!r}")


def bank_id(settings: MemorySettings) -> str:
    """The company bank's id, checked so every driver accepts it as a path segment."""
    if not _BANK_ID.fullmatch(settings.bank_id):
        raise ValueError(f"bank id must be 1-128 of [A-Za-z0-9._-]: {settings.bank_id!r}")
    return settings.bank_id


def service_tag(service: str) -> str:
    return f"service:{service}"


def kind_tag(kind: str) -> str:
    return f"kind:{kind}"


def severity_tag(severity: str) -> str:
    return f"severity:{severity}"


def resolution_tag(resolution_kind: str) -> str:
    return f"resolution:{resolution_kind}"


def normalize_resolution_kind(value: str) -> str:
    """A kind as people type it ("False alarm", "self recovered") in its canonical spelling; "" stays "".

    Raises ``ValueError`` naming the allowed kinds for anything else."""
    kind = "-".join(value.strip().lower().replace("_", " ").replace("-", " ").split())
    if kind and kind not in RESOLUTION_KINDS:
        raise ValueError(f"must be one of {', '.join(RESOLUTION_KINDS)} (or empty): {value!r}")
    return kind


def record_tags(record: IncidentRecord, *, kind: str = "incident", severity: str | None = None) -> list[str]:
    """The tags a record is retained with: its service, its kind, and when known its severity and how it
    ended (``resolution:<kind>``)."""
    tags = [service_tag(record.service), kind_tag(kind)]
    if severity:
        tags.append(severity_tag(severity))
    if record.resolution_kind:
        tags.append(resolution_tag(record.resolution_kind))
    return tags


def tag_value(tags: list[str], prefix: str) -> str | None:
    """The value of the first ``prefix:value`` tag, e.g. ``tag_value(tags, "service")``."""
    for tag in tags:
        name, sep, value = tag.partition(":")
        if sep and name == prefix:
            return value
    return None
