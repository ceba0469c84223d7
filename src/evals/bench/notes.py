"""``recallops bench import --notes DIR``: extraction against a careful reader's answers on a team's
own notes (wiki pages, chat pastes, bullet lists), not a curated corpus.

The folder holds ``notes/`` (the files, read as ``recallops import`` reads them), ``expected.jsonl``
(one JSON object a line naming its ``file`` under ``notes/`` and the fields a careful reader fills
from it) and, optionally, ``services.txt`` (the team's known services, one a line, which the
extraction is given as an import gives it the services already in memory). Text fields (symptom,
error signature, root cause, resolution steps, failed attempts) and the service are scored as
``bench import`` scores the public corpus: token precision and recall against the expected text,
over the notes whose expected field has text. The time is the day the note says it happened (ISO),
right or wrong as a whole.
"""

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.bench.extraction import Comparison, compare_text, field_table, fill_line, fill_rates, scores
from evals.bench.ranking import folds
from memory.extraction.document import SourceDocument
from memory.extraction.extract import Extraction, extract
from memory.extraction.readers import read_bytes

TEXT_FIELDS = ("symptom", "error_signature", "root_cause", "resolution_steps", "failed_attempts")
SCORED = (*TEXT_FIELDS, "service", "timestamp")
EXPECTED = "expected.jsonl"
NOTES = "notes"
SERVICES = "services.txt"  # the team's known services, one a line, as its bank would list them


class NotesError(ValueError):
    """The folder cannot be scored: the message names the file and line at fault."""


@dataclass(frozen=True)
class Note:
    document: SourceDocument
    expected: Mapping[str, str]


def _expected(line: str, where: str) -> dict[str, str]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise NotesError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(row, dict) or not isinstance(row.get("file"), str):
        raise NotesError(f"{where}: an object naming its note's file")
    unknown = sorted(set(row) - {"file", *SCORED})
    if unknown:
        raise NotesError(f"{where}: unknown field {unknown[0]} (fields: {', '.join(SCORED)})")
    if not all(isinstance(value, str) for value in row.values()):
        raise NotesError(f"{where}: every field is a string")
    return row


def load_notes(folder: Path) -> list[Note]:
    """Every note of ``folder`` with its expected fields, in the order ``expected.jsonl`` lists them."""
    listing = folder / EXPECTED
    if not listing.is_file():
        raise NotesError(f"{folder} has no {EXPECTED}")
    found: list[Note] = []
    lines = listing.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        row = _expected(line, f"{EXPECTED} line {number}")
        path = folder / NOTES / row["file"]
        if not path.is_file():
            raise NotesError(f"{EXPECTED} line {number}: no file {NOTES}/{row['file']}")
        read = read_bytes(row["file"], path.read_bytes())
        if read.unreadable or len(read.documents) != 1:
            reason = read.unreadable.reason if read.unreadable else "not one post-mortem"
            raise NotesError(f"{NOTES}/{row['file']}: {reason}")
        found.append(Note(read.documents[0], {k: v for k, v in row.items() if k != "file"}))
    if not found:
        raise NotesError(f"{listing} lists no note")
    return found


def compare_note(extraction: Extraction, expected: Mapping[str, str]) -> dict[str, Comparison]:
    """Each scored field the reader filled: text by token overlap, the day as right or wrong."""
    got = {**extraction.fields, "service": extraction.service}
    found = compare_text(got, {name: expected.get(name, "") for name in (*TEXT_FIELDS, "service")})
    day = expected.get("timestamp", "")
    if day:
        said = extraction["timestamp"].value
        right = float(said[:10] == day[:10])
        found["timestamp"] = Comparison(bool(said), right, right)
    return found


def _named(notes: Sequence[Note]) -> list[tuple[str, Note]]:
    return [(note.document.name, note) for note in notes]


def run_notes_bench(folder: Path) -> dict[str, Any]:
    """Every scored field's figures over the notes and each half, and every template field's fill rate."""
    notes = load_notes(folder)
    listed = folder / SERVICES
    services = listed.read_text(encoding="utf-8").split() if listed.is_file() else []
    started = time.perf_counter()
    extractions = {name: extract(note.document, services) for name, note in _named(notes)}
    elapsed = time.perf_counter() - started
    per_note = {name: compare_note(extractions[name], note.expected) for name, note in _named(notes)}
    ids = sorted(per_note)
    return {
        "notes": len(notes),
        "fields": scores(per_note, ids, SCORED),
        "halves": [scores(per_note, half, SCORED) for half in folds(ids, 2)],
        "per_note": {name: {f: round(c.f1, 4) for f, c in found.items()} for name, found in per_note.items()},
        **fill_rates(list(extractions.values())),
        "documents_per_s": round(len(notes) / elapsed, 1) if elapsed else None,
    }


def markdown(result: Mapping[str, Any]) -> str:
    heading = f"{result['notes']} notes against a careful reader's fields; no model."
    return "\n".join([heading, "", field_table(result), "", fill_line(result)])
