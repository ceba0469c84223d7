"""Importing history: post-mortems and the demo seeds into the incident store AND the memory bank.

Each valid row is committed to the incident store first (resolved incident, resolution, timeline
line), then retained in memory under its incident id. Both writes are upserts, so running the same
import again changes nothing and repairs a run that stopped half-way (memory unreachable, Ctrl-C).
An import writes incident records only: a row is rejected, with the reason, when its id belongs to
a live incident, a correction or a runbook (memory is asked what the id holds), so nobody with
``incidents:write`` can rewrite a runbook's steps or a correction through the import door; runbooks
change only through ``recallops seed``. An id that is already history is rewritten only when the
import asks to ``replace`` it (a right of its own), and the replaced version stays on the timeline.
Every other row still lands, with ``imported_by`` (the importing token or user) in its memory
metadata; ``resolved_by`` is the row's own data.

Rows go in batches of ``IMPORT_BATCH``: one database transaction (a savepoint per row, so a refused
row leaves the others) and then one ``log_incidents`` call, which embeds the batch's texts together.
Progress is reported per batch.
"""

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session, sessionmaker

from incidents.history import (
    HistoryConflict,
    Origin,
    Outcome,
    historical,
    memory_mark,
    upsert_historical,
)
from incidents.locking import serialized_writes
from memory.service import (
    CORRECTION_ID,
    DocumentWrite,
    HistoryRow,
    Rejected,
    Rejections,
    Retain,
    Runbook,
    describe,
    incident_write,
    log_incidents,
    log_runbook,
    tag_value,
    validate_items,
)
from web.app.metrics import HISTORY_RECORDS

SEEDS_DIR = Path(str(resources.files("seeds")))  # package data, so an installed wheel finds it
SEVERITY_UNKNOWN = "unknown"
IMPORT_BATCH = 128  # rows per transaction and per embedding call


class ImportSummary(BaseModel):
    """What an import did. ``rejected`` lists at most one page of rejections (the first ones after
    line ``rejected_after``); ``rejected_count`` counts them all, and ``rejected_next``, when more
    remain, is the ``rejected_after`` that lists the next page (the same import sent again changes
    nothing, so sending it again is how the rest is read)."""

    imported: int = 0
    updated: int = 0
    unchanged: int = 0
    # Of the rows stored, those memory did not hold: "unchanged" speaks of the incident store, and a
    # new memory (another Hindsight bank, a fresh directory) is given every record all the same.
    new_to_memory: int = 0
    rejected_count: int = 0
    rejected: list[Rejected] = []
    rejected_next: int | None = None
    runbooks: int = 0


@dataclass(frozen=True)
class Seeds:
    rows: list[tuple[int, HistoryRow]]
    runbooks: list[Runbook]


def _store(
    sessions: sessionmaker[Session], rows: list[HistoryRow], origin: Origin, actor: str, replace: bool
) -> list[Outcome | HistoryConflict]:
    """Every row's outcome, or the conflict that refused it, in one transaction."""
    outcomes: list[Outcome | HistoryConflict] = []
    with sessions() as db, serialized_writes(db):
        for row in rows:
            try:
                with db.begin_nested():
                    history = historical(row)
                    outcomes.append(
                        upsert_historical(
                            db_session=db, history=history, origin=origin, actor=actor, replace=replace
                        )
                    )
            except HistoryConflict as exc:
                outcomes.append(exc)
        db.commit()
    return outcomes


def _write(row: HistoryRow, origin: Origin, actor: str) -> DocumentWrite:
    severity = None if row.severity.lower() == SEVERITY_UNKNOWN else row.severity.lower()
    metadata = memory_mark(origin, actor) | {"title": row.display_title()}
    return incident_write(row.record(), severity=severity, metadata=metadata)


async def import_history(
    *,
    sessions: sessionmaker[Session],
    bank: Retain,
    rows: list[tuple[int, HistoryRow]],
    origin: Origin,
    actor: str,
    replace: bool = False,
    rejections: Rejections | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> ImportSummary:
    """Write every row to both stores; ``MemoryUnavailable`` stops the run (re-run it to finish).

    A row whose id is already history with other content is rejected unless ``replace``: rewriting
    history is its own decision, and the version it replaces stays on the incident's timeline."""
    rejections = rejections if rejections is not None else Rejections()
    summary = ImportSummary()
    for start in range(0, len(rows), IMPORT_BATCH):
        batch = rows[start : start + IMPORT_BATCH]
        admitted: list[tuple[int, HistoryRow]] = []
        held: set[str] = set()
        for line, row in batch:
            try:
                if await _held(bank, row.incident_id):
                    held.add(row.incident_id)
            except HistoryConflict as exc:
                rejections.add(line, row.incident_id, [str(exc)])
            else:
                admitted.append((line, row))
        outcomes = await asyncio.to_thread(
            _store, sessions, [row for _, row in admitted], origin, actor, replace
        )
        stored: list[HistoryRow] = []
        for (line, row), outcome in zip(admitted, outcomes, strict=True):
            if isinstance(outcome, HistoryConflict):
                rejections.add(line, row.incident_id, [str(outcome)])
                continue
            stored.append(row)
            setattr(summary, outcome, getattr(summary, outcome) + 1)
            summary.new_to_memory += row.incident_id not in held
            HISTORY_RECORDS.labels(origin=origin, outcome=outcome).inc()
        await log_incidents(bank, [_write(row, origin, actor) for row in stored])
        if on_progress is not None:
            on_progress(len(batch))
    summary.rejected_count = rejections.count
    summary.rejected = rejections.shown()
    summary.rejected_next = rejections.next_after()
    HISTORY_RECORDS.labels(origin=origin, outcome="rejected").inc(rejections.count)
    return summary


async def _held(bank: Retain, incident_id: str) -> bool:
    """Whether memory holds an incident record under this id already; ``HistoryConflict`` when it holds
    something other than an incident record there."""
    if CORRECTION_ID.search(incident_id):
        raise HistoryConflict(f"{incident_id} is a correction's id; corrections are added to their incident")
    tags = await bank.stored_tags(incident_id)
    kind = tag_value(tags or [], "kind")
    if tags is not None and kind != "incident":
        hint = "runbooks change only through `recallops seed`" if kind == "runbook" else "choose another id"
        raise HistoryConflict(
            f"{incident_id} is a {kind or 'untagged'} record in memory, not an incident; {hint}"
        )
    return tags is not None


async def retain_runbooks(bank: Retain, runbooks: list[Runbook]) -> int:
    for runbook in runbooks:
        await log_runbook(bank, runbook)
    return len(runbooks)


class InvalidSeeds(ValueError):
    """A seed folder whose files are not seeds (YAML that does not parse, a list missing, an invalid
    entry): the operator's file, named in one line."""


def load_seeds(directory: Path = SEEDS_DIR) -> Seeds:
    """The demo history: incidents and runbooks, each naming a service of ``services.yaml``.

    The seeds are the project's own data, so anything invalid in them is an error, not a rejection.
    """
    services = {s["name"] for s in _yaml(directory / "services.yaml", "services")}
    rejections = Rejections(limit=sys.maxsize)
    rows = validate_items(enumerate(_yaml(directory / "incidents.yaml", "incidents"), start=1), rejections)
    problems = [f"incident {r.line} ({r.incident_id}): {'; '.join(r.reasons)}" for r in rejections.shown()]
    problems += [
        f"incident {line} ({row.incident_id}): unknown service {row.service}"
        for line, row in rows
        if row.service not in services
    ]
    runbooks = []
    for n, item in enumerate(_yaml(directory / "runbooks.yaml", "runbooks"), start=1):
        try:
            runbook = Runbook.model_validate(item)
        except ValidationError as exc:
            problems.append(f"runbook {n}: {'; '.join(describe(exc))}")
            continue
        if runbook.service not in services:
            problems.append(f"runbook {n} ({runbook.runbook_id}): unknown service {runbook.service}")
        runbooks.append(runbook)
    if problems:
        raise InvalidSeeds(f"invalid seeds in {directory}: " + " | ".join(problems))
    return Seeds(rows=rows, runbooks=runbooks)


def _yaml(path: Path, key: str) -> list[Any]:
    """The list under ``key`` in a seed file."""
    with path.open(encoding="utf-8") as handle:
        try:
            loaded = yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            raise InvalidSeeds(f"{path} is not valid YAML: " + " ".join(str(exc).split())) from exc
    items = loaded.get(key) if isinstance(loaded, dict) else None
    if not isinstance(items, list):
        raise InvalidSeeds(f"{path} holds no list under {key!r}")
    return items
