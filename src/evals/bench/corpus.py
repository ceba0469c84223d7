"""The post-mortem corpus as the benchmarks read it: its records, and each one as imported history.

Protocol step 1 of the corpus README lives here, so the retrieval benchmark and the extraction
benchmark read the curated fields the same way.
"""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memory.history import MAX_TEXT


def load_corpus(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# A corpus id names a page once imported, and a page address holds no "/" or "#" (``memory.history``):
# the bank stores those two as ":" and "~", and the benchmarks read its ids back the same way.
_STORED = str.maketrans({"/": ":", "#": "~"})
_READ = str.maketrans({":": "/", "~": "#"})


def stored_id(record_id: str) -> str:
    """The id the record is imported under."""
    stored = record_id.translate(_STORED)
    if corpus_id(stored) != record_id:
        raise ValueError(f"corpus id {record_id!r} holds ':' or '~', which the import cannot tell apart")
    return stored


def corpus_id(stored: str) -> str:
    """The corpus id of a recalled record."""
    return stored.translate(_READ)


def first_service(record: Mapping[str, Any]) -> str:
    services = [s.strip() for s in record.get("services") or [] if s and s.strip()]
    return " ".join(services[0].split())[:255] if services else "unknown"


def joined(values: Iterable[str]) -> str:
    return "; ".join(v.strip() for v in values if v and v.strip())


# The import refuses a post-mortem with an empty required field or a field over its size limit; a few
# public ones have gaps, and the protocol imports every record, so a gap is imported as this marker (the
# same words in every such record) and an oversized field is cut at the limit.
NOT_RECORDED = "not recorded"
REQUIRED = ("symptom", "error_signature", "root_cause", "resolution_steps", "outcome")


def _timestamp(date: str) -> str:
    """The record's date at midnight UTC; a year or a year and month alone means its first day."""
    parts = date.strip().split("-")
    if not parts[0].isdigit() or len(parts) > 3:
        raise ValueError(f"unusable date {date!r}: expected YYYY-MM-DD")
    year, month, day = [*parts, "01", "01"][:3]
    return f"{year}-{month.zfill(2)}-{day.zfill(2)}T00:00:00Z"


def import_row(record: Mapping[str, Any]) -> dict[str, str]:
    """Protocol step 1: one corpus record as a historical incident; labels and details stay out."""
    row = {
        "incident_id": stored_id(record["id"]),
        "service": first_service(record),
        "timestamp": _timestamp(str(record.get("date") or "")),
        "symptom": (record.get("summary") or "").strip(),
        "error_signature": joined(record.get("manifestation") or []),
        "root_cause": ((record.get("root_cause") or {}).get("details") or "").strip(),
        "resolution_steps": ((record.get("mitigation") or {}).get("details") or "").strip(),
        "runbook_used": "",
        "outcome": joined((record.get("mitigation") or {}).get("labels") or []),
        "failed_attempts": "",
        "resolved_by": "",
    }
    filled = {key: (value or NOT_RECORDED) if key in REQUIRED else value for key, value in row.items()}
    return {key: value[:MAX_TEXT] for key, value in filled.items()}
