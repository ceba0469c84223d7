"""Corrections: what an engineer later found the record of a past incident got wrong.

A correction is a document of its own (id ``<incident id>-correction-<n>``), tagged ``kind:correction``
and the corrected incident's service and severity, with ``metadata["corrects"]`` = the incident id, so
recall finds it next to the incident and a reader can put it ahead of the original text. Its labeled
form mirrors the incident template (continuation lines indented by two spaces)::

    CORRECTION INC-0042-correction-1 — checkout-service
    Corrects: INC-0042
    Timestamp: 2026-03-15T10:00:00+00:00
    Correction: the root cause was not the pool size, it was idle-in-transaction sessions
    Corrected by: dana
"""

import re
from dataclasses import dataclass
from datetime import datetime

from memory.schema import kind_tag, service_tag, severity_tag

CORRECTION_ID = re.compile(r"-correction-\d+$")  # how every correction's document id ends
HEADER_PREFIX = "CORRECTION "
SEPARATOR = " — "
INDENT = "  "
_LABELS = (
    ("corrects", "Corrects"),
    ("timestamp", "Timestamp"),
    ("text", "Correction"),
    ("author", "Corrected by"),
)


@dataclass(frozen=True)
class CorrectionRecord:
    document_id: str
    corrects: str
    service: str
    timestamp: datetime
    text: str
    author: str


def format_correction(record: CorrectionRecord) -> str:
    lines = [f"{HEADER_PREFIX}{record.document_id}{SEPARATOR}{record.service}"]
    for attr, label in _LABELS:
        value = getattr(record, attr)
        first, *rest = (value.isoformat() if isinstance(value, datetime) else value).split("\n")
        lines.append(f"{label}: {first}")
        lines.extend(INDENT + line for line in rest)
    return "\n".join(lines)


def parse_correction(text: str) -> CorrectionRecord:
    """Inverse of ``format_correction``; ``ValueError`` on anything else."""
    header, *lines = text.rstrip("\n").split("\n")
    if not header.startswith(HEADER_PREFIX) or SEPARATOR not in header:
        raise ValueError(f"not a correction header: {header[:80]!r}")
    document_id, service = header[len(HEADER_PREFIX) :].split(SEPARATOR, 1)
    values: dict[str, list[str]] = {}
    labels = iter(_LABELS)
    current: list[str] | None = None
    for line in lines:
        if line.startswith(INDENT) and current is not None:
            current.append(line[len(INDENT) :])
            continue
        attr, label = next(((a, lab) for a, lab in labels if line.startswith(f"{lab}: ")), ("", ""))
        if not attr:
            raise ValueError(f"unexpected line in a correction: {line[:80]!r}")
        current = values[attr] = [line[len(label) + 2 :]]
    if len(values) != len(_LABELS):
        raise ValueError("a correction needs Corrects, Timestamp, Correction and Corrected by")
    joined = {attr: "\n".join(parts) for attr, parts in values.items()}
    return CorrectionRecord(
        document_id=document_id,
        service=service,
        corrects=joined["corrects"],
        timestamp=datetime.fromisoformat(joined["timestamp"]),
        text=joined["text"],
        author=joined["author"],
    )


def correction_tags(record: CorrectionRecord, *, severity: str | None = None) -> list[str]:
    tags = [service_tag(record.service), kind_tag("correction")]
    if severity:
        tags.append(severity_tag(severity))
    return tags


def correction_metadata(record: CorrectionRecord) -> dict[str, str]:
    return {"corrects": record.corrects, "author": record.author}
