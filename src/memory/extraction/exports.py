"""Incident tools' exports: PagerDuty's and incident.io's incidents, as CSV or JSON, one document each.

PagerDuty: the REST API's incident objects (``{"incidents": [...]}``, a list of them, or one
``{"incident": {...}}``: ``incident_number``, ``title``, ``description``, ``service.summary``,
``created_at``, ``resolved_at``, ``urgency``, ``body.details``, ``notes``) and the incidents CSV
(``incident_number``, ``title`` or ``description``, ``service_name``, ``created_on``,
``resolved_on``, ``urgency``, ...). incident.io: the v2 API's incidents (``reference``, ``name``,
``summary``, ``severity.name``, ``incident_status.name``, ``created_at``, ``custom_field_entries``,
``incident_timestamp_values``) and the dashboard's CSV (``Reference``, ``Name``, ``Summary``,
``Severity``, ``Status``, ``Created at``, then one column per custom field).

Each incident becomes a document whose text is its title, its summary and every other free-text
column under its own heading (a "Root cause" custom field becomes ``## Root cause``), and whose
``meta`` holds what the export states outright: title, service, started_at, resolved_at, severity,
status, reference, url. A file that is neither tool's export is refused as a whole.
"""

import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

from memory.extraction.document import SourceDocument

PAGERDUTY = "pagerduty"
INCIDENT_IO = "incident.io"


class NotAnExport(ValueError):
    """The file is CSV or JSON but no incident tool's export this reader knows; the message says why."""


def _key(name: str) -> str:
    return "_".join(name.strip().lower().replace("-", " ").split())


# Columns (normalized with ``_key``) that say one thing, by what they say; the first present wins.
_META_COLUMNS: dict[str, tuple[str, ...]] = {
    "title": ("title", "name", "description", "summary"),
    "service": ("service_name", "service", "affected_service", "services", "affected_services"),
    "started_at": (
        "impact_started",
        "impact_started_at",
        "started_at",
        "created_at",
        "created_on",
        "reported_at",
    ),
    "resolved_at": ("resolved_at", "resolved_on", "closed_at", "resolved"),
    "severity": ("severity", "urgency", "priority"),
    "status": ("status", "incident_status"),
    "reference": ("reference", "incident_number", "id"),
    "url": ("permalink", "html_url", "url", "link"),
}
_NOT_TEXT = frozenset(
    {
        "id", "incident_number", "reference", "service_id", "service_name", "service", "escalation_policy",
        "escalation_policy_id", "escalation_policy_name", "created_on", "created_at", "updated_at",
        "resolved_on", "resolved_at", "reported_at", "started_at", "closed_at", "status", "urgency",
        "severity", "priority", "html_url", "url", "permalink", "self", "type", "incident_key",
        "assigned_to", "assigned_to_user", "acknowledged_by", "resolved_by", "seconds_to_first_ack",
        "seconds_to_resolve", "auto_resolved", "escalation_count", "team_name", "teams", "duration",
        "incident_type", "mode", "visibility", "title", "name", "affected_service",
    }
)  # fmt: skip


def _flat(value: Any) -> str:
    """A scalar or an API reference object as one line of text (``{"summary": "api"}`` -> ``api``)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        for key in ("summary", "name", "value_text", "value_option", "label", "value"):
            if key in value:
                return _flat(value[key])
        return ""
    if isinstance(value, list):
        return ", ".join(filter(None, (_flat(item) for item in value)))
    return str(value).strip()


def _heading(column: str) -> str:
    """A column as a heading: ``root_cause`` -> ``Root cause``, ``Root cause`` unchanged."""
    words = column.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _tool_of(keys: set[str]) -> str | None:
    if "incident_number" in keys:
        return PAGERDUTY
    if "reference" in keys and "name" in keys:
        return INCIDENT_IO
    return None


def _document(
    source: str, tool: str, fields: Mapping[str, Any], sections: list[tuple[str, str]]
) -> SourceDocument:
    meta: dict[str, str] = {}
    for name, columns in _META_COLUMNS.items():
        for column in columns:
            value = _flat(fields.get(column))
            if value:
                meta[name] = value
                break
    meta["tool"] = tool
    if tool == INCIDENT_IO and "title" in meta and _flat(fields.get("name")):
        meta["title"] = _flat(fields["name"])
    lines = [meta.get("title", "")]
    # PagerDuty's ``summary`` is the title with its number; incident.io's is the written summary.
    summary = _flat(fields.get("description" if tool == PAGERDUTY else "summary"))
    if summary and summary != meta.get("title"):
        lines += ["", summary]
    for heading, body in sections:
        if body and body != summary and body != meta.get("title"):
            lines += ["", f"## {heading}", "", body]
    text = "\n".join(lines).strip()
    digest = hashlib.sha256(
        json.dumps({"tool": tool, "text": text, "meta": meta}, sort_keys=True).encode()
    ).hexdigest()
    reference = meta.get("reference", "")
    name = f"{source}#{reference}" if reference else source
    return SourceDocument(name=name, kind=tool, text=text, content_hash=digest, meta=meta)


def _api_sections(tool: str, incident: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The free text of one API incident object, under headings."""
    sections: list[tuple[str, str]] = []
    if tool == PAGERDUTY:
        body = incident.get("body")
        if isinstance(body, dict):
            # The trigger's details are what the alert saw: under a heading that names the symptom,
            # rather than prose that fills it only when its sentences carry a symptom's cue words.
            sections.append(("What happened", _flat(body.get("details"))))
        notes = incident.get("notes")
        if isinstance(notes, list):
            contents = [_flat(n.get("content")) for n in notes if isinstance(n, dict)]
            sections.append(("Notes", "\n".join(f"- {c}" for c in contents if c)))
        sections.append(("Resolution", _flat(incident.get("resolve_reason"))))
        return sections
    for entry in incident.get("custom_field_entries") or []:
        if isinstance(entry, dict):
            sections.append((_flat(entry.get("custom_field")), _flat(entry.get("values"))))
    return [(heading, body) for heading, body in sections if heading and _key(heading) not in _NOT_TEXT]


def _api_fields(tool: str, incident: Mapping[str, Any]) -> dict[str, Any]:
    fields = {_key(k): v for k, v in incident.items()}
    if tool == INCIDENT_IO:
        for stamp in incident.get("incident_timestamp_values") or []:
            if isinstance(stamp, dict):
                label = _key(_flat(stamp.get("incident_timestamp")))
                fields.setdefault(label, _flat(stamp.get("value")))
        for entry in incident.get("custom_field_entries") or []:
            if isinstance(entry, dict):
                fields.setdefault(_key(_flat(entry.get("custom_field"))), _flat(entry.get("values")))
    return fields


def from_json(source: str, loaded: Any) -> list[SourceDocument]:
    """The incidents of a PagerDuty or incident.io JSON export; ``NotAnExport`` for anything else."""
    if isinstance(loaded, dict) and isinstance(loaded.get("incident"), dict):
        items: Any = [loaded["incident"]]
    elif isinstance(loaded, dict) and isinstance(loaded.get("incidents"), list):
        items = loaded["incidents"]
    else:
        items = loaded
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        raise NotAnExport(
            "JSON that is not a list of incidents (expected PagerDuty's or incident.io's export)"
        )
    documents = []
    for position, incident in enumerate(items, start=1):
        tool = _tool_of({_key(k) for k in incident})
        if tool is None:
            raise NotAnExport(
                f"incident {position} has neither PagerDuty's incident_number "
                "nor incident.io's reference and name"
            )
        documents.append(_document(source, tool, _api_fields(tool, incident), _api_sections(tool, incident)))
    return documents


def _rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header = [_key(h) for h in next(reader, [])]
    if not any(header):
        raise NotAnExport("CSV without a header line")
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise NotAnExport(
                f"malformed CSV: line {reader.line_num} has {len(row)} fields, the header has {len(header)}"
            )
        yield reader.line_num, dict(zip(header, row, strict=True))


def from_csv(source: str, text: str, headers: list[str]) -> list[SourceDocument]:
    """The incidents of a PagerDuty or incident.io CSV export; ``NotAnExport`` for anything else."""
    keys = {_key(h) for h in headers}
    tool = _tool_of(keys)
    if tool is None:
        shown = ", ".join(headers[:8]) + (", ..." if len(headers) > 8 else "")
        raise NotAnExport(
            f"CSV with columns ({shown}) is neither a PagerDuty nor an incident.io incidents export"
        )
    by_key = {_key(h): _heading(h) for h in headers}
    documents = []
    try:
        for _line, row in _rows(text):
            sections = [(by_key[k], v.strip()) for k, v in row.items() if k not in _NOT_TEXT and v.strip()]
            documents.append(_document(source, tool, row, sections))
    except csv.Error as exc:
        raise NotAnExport(f"malformed CSV: {exc}") from exc
    if not documents:
        raise NotAnExport("CSV export with a header and no incidents")
    return documents


def csv_headers(text: str) -> list[str]:
    """The header line of a CSV file; ``NotAnExport`` when it does not parse."""
    try:
        return next(csv.reader(io.StringIO(text, newline=""), strict=True), [])
    except csv.Error as exc:
        raise NotAnExport(f"malformed CSV: {exc}") from exc
