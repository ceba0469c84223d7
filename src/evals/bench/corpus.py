"""The post-mortem corpus as the benchmarks read it: its records, and each one as imported history.

Protocol step 1 of the corpus README lives here, so the retrieval benchmark and the extraction
benchmark read the curated fields the same way.
"""

import datetime
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from incidents.time_input import plausible
from memory.history import MAX_TEXT


class CorpusError(ValueError):
    """A corpus the benchmarks cannot read, with the file and line that says why."""


def load_corpus(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL corpus, each checked for what every benchmark needs (a JSON object, an id
    no other record has, a date), so a bad line is named by its number before any benchmark starts."""
    records: list[dict[str, Any]] = []
    lines: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path.name} line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{where}: not JSON ({exc.msg}, column {exc.colno})") from None
            if not isinstance(record, dict):
                raise CorpusError(f"{where}: not a JSON object")
            ident = record.get("id")
            if not isinstance(ident, str) or not ident.strip():
                raise CorpusError(f'{where}: no "id"')
            if ident in lines:
                raise CorpusError(f"{where}: id {ident!r} is already on line {lines[ident]}")
            try:
                stored_id(ident)
                timestamp(record.get("date"))
            except ValueError as exc:
                raise CorpusError(f"{where} ({ident}): {exc}") from None
            lines[ident] = number
            records.append(record)
    if not records:
        raise CorpusError(f"{path.name} holds no record")
    return records


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Judgments, ``query<TAB>doc<TAB>grade`` a line under an optional header: 2 the same failure, 1
    related, 0 not (binary judgments, 1 relevant, read as 2). A line of another shape is named, and a
    file with no judgment at all refused: read as nothing, it would score every method 0 as if that
    were measured."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = [part.strip() for part in line.rstrip("\n").split("\t")]
            if len(parts) == 3 and parts[2].isdigit() and parts[0] and parts[1]:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
            elif qrels or number > 1 or len(parts) != 3:
                raise CorpusError(
                    f"{path.name} line {number}: expected query, doc and grade (an integer), tab-separated"
                )
    if not qrels:
        raise CorpusError(f"{path.name} holds no judgment")
    if max(grade for docs in qrels.values() for grade in docs.values()) == 1:
        # Binary judgments (relevant 1, else 0 or absent): their relevant is this protocol's grade 2.
        # Read as "related", every figure over grade 2 would be 0 as if measured.
        return {query: {doc: 2 * grade for doc, grade in docs.items()} for query, docs in qrels.items()}
    return qrels


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


def values(value: object) -> list[str]:
    """A list field's values. A lone string is one value: read as a list, it would be its letters."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def details(value: object) -> str:
    """The details of a ``{labels, details}`` field (root cause, mitigation); a plain string is them."""
    if isinstance(value, Mapping):
        return str(value.get("details") or "").strip()
    return value.strip() if isinstance(value, str) else ""


def first_service(record: Mapping[str, Any]) -> str:
    services = [s.strip() for s in values(record.get("services")) if s.strip()]
    return " ".join(services[0].split())[:255] if services else "unknown"


def joined(parts: Iterable[str]) -> str:
    return "; ".join(v.strip() for v in parts if v and v.strip())


# The import refuses a post-mortem with an empty required field or a field over its size limit; a few
# public ones have gaps, and the protocol imports every record, so a gap is imported as this marker (the
# same words in every such record) and an oversized field is cut at the limit.
NOT_RECORDED = "not recorded"
REQUIRED = ("symptom", "error_signature", "root_cause", "resolution_steps", "outcome")


def timestamp(date: object) -> str:
    """The record's date in UTC: a day means its midnight, a year or a year and month alone its first
    day, a full ISO date and time itself. The replay orders the stream by it and the import needs one
    it can take (``plausible``), so a record without such a date is refused."""
    if not isinstance(date, str) or not date.strip():
        raise ValueError('no "date": every record needs one (YYYY-MM-DD), the replay goes in date order')
    text = date.strip()
    parts = text.split("-")
    try:
        if len(parts) <= 3 and all(p.isdigit() for p in parts):
            year, month, day = [*parts, "01", "01"][:3]
            moment = datetime.datetime(int(year), int(month), int(day), tzinfo=datetime.UTC)
        else:
            moment = datetime.datetime.fromisoformat(text)
            moment = moment.replace(tzinfo=moment.tzinfo or datetime.UTC).astimezone(datetime.UTC)
    except ValueError:
        raise ValueError(f"unusable date {date!r}: expected YYYY-MM-DD or an ISO date and time") from None
    return plausible(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def _labels(value: object) -> list[str]:
    return values(value.get("labels")) if isinstance(value, Mapping) else []


def import_row(record: Mapping[str, Any]) -> dict[str, str]:
    """Protocol step 1: one corpus record as a historical incident; labels and details stay out."""
    row = {
        "incident_id": stored_id(record["id"]),
        "service": first_service(record),
        "timestamp": timestamp(record.get("date")),
        "symptom": str(record.get("summary") or "").strip(),
        "error_signature": joined(values(record.get("manifestation"))),
        "root_cause": details(record.get("root_cause")),
        "resolution_steps": details(record.get("mitigation")),
        "runbook_used": "",
        "outcome": joined(_labels(record.get("mitigation"))),
        "failed_attempts": "",
        "resolved_by": "",
    }
    filled = {key: (value or NOT_RECORDED) if key in REQUIRED else value for key, value in row.items()}
    return {key: value[:MAX_TEXT] for key, value in filled.items()}
