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
    upsert_historical,
)
from incidents.locking import serialized_writes
from memory.service import (
    CORRECTION_ID,
    HistoryRow,
    Rejected,
    Rejections,
    Retain,
    Runbook,
    describe,
    log_incident,
    log_runbook,
    tag_value,
    validate_items,
)
from web.app.metrics import HISTORY_RECORDS

SEEDS_DIR = Path(str(resources.files("seeds")))  # package data, so an installed wheel finds it
SEVERITY_UNKNOWN = "unknown"


class ImportSummary(BaseModel):
    """What an import did. ``rejected`` lists at most one page of rejections (the first ones after
    line ``rejected_after``); ``rejected_count`` counts them all, and ``rejected_next``, when more
    remain, is the ``rejected_after`` that lists the next page (the same import sent again changes
    nothing, so sending it again is how the rest is read)."""

    imported: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected_count: int = 0
    rejected: list[Rejected] = []
    rejected_next: int | None = None
    runbooks: int = 0


@dataclass(frozen=True)
class Seeds:
    rows: list[tuple[int, HistoryRow]]
    runbooks: list[Runbook]


def _store(
    sessions: sessionmaker[Session], row: HistoryRow, origin: Origin, actor: str, replace: bool
) -> Outcome:
    with sessions() as db, serialized_writes(db):
        outcome = upsert_historical(
            db_session=db, history=historical(row), origin=origin, actor=actor, replace=replace
        )
        db.commit()
        return outcome


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
    for line, row in rows:
        try:
            await _check_id(bank, row.incident_id)
            outcome = await asyncio.to_thread(_store, sessions, row, origin, actor, replace)
        except HistoryConflict as exc:
            rejections.add(line, row.incident_id, [str(exc)])
        else:
            severity = None if row.severity.lower() == SEVERITY_UNKNOWN else row.severity.lower()
            metadata = {"origin": origin, "title": row.display_title()}
            await log_incident(
                bank,
                row.record(),
                severity=severity,
                metadata=metadata | ({"imported_by": actor} if origin == "import" else {}),
            )
            setattr(summary, outcome, getattr(summary, outcome) + 1)
            HISTORY_RECORDS.labels(origin=origin, outcome=outcome).inc()
        if on_progress is not None:
            on_progress(1)
    summary.rejected_count = rejections.count
    summary.rejected = rejections.shown()
    summary.rejected_next = rejections.next_after()
    HISTORY_RECORDS.labels(origin=origin, outcome="rejected").inc(rejections.count)
    return summary


async def _check_id(bank: Retain, incident_id: str) -> None:
    """``HistoryConflict`` when memory holds something other than an incident record under this id."""
    if CORRECTION_ID.search(incident_id):
        raise HistoryConflict(f"{incident_id} is a correction's id; corrections are added to their incident")
    tags = await bank.stored_tags(incident_id)
    kind = tag_value(tags or [], "kind")
    if tags is not None and kind != "incident":
        hint = "runbooks change only through `recallops seed`" if kind == "runbook" else "choose another id"
        raise HistoryConflict(
            f"{incident_id} is a {kind or 'untagged'} record in memory, not an incident; {hint}"
        )


async def retain_runbooks(bank: Retain, runbooks: list[Runbook]) -> int:
    for runbook in runbooks:
        await log_runbook(bank, runbook)
    return len(runbooks)


def load_seeds(directory: Path = SEEDS_DIR) -> Seeds:
    """The demo history: incidents and runbooks, each naming a service of ``services.yaml``.

    The seeds are the project's own data, so anything invalid in them is an error, not a rejection.
    """
    services = {s["name"] for s in _yaml(directory / "services.yaml")["services"]}
    rejections = Rejections(limit=sys.maxsize)
    rows = validate_items(enumerate(_yaml(directory / "incidents.yaml")["incidents"], start=1), rejections)
    problems = [f"incident {r.line} ({r.incident_id}): {'; '.join(r.reasons)}" for r in rejections.shown()]
    problems += [
        f"incident {line} ({row.incident_id}): unknown service {row.service}"
        for line, row in rows
        if row.service not in services
    ]
    runbooks = []
    for n, item in enumerate(_yaml(directory / "runbooks.yaml")["runbooks"], start=1):
        try:
            runbook = Runbook.model_validate(item)
        except ValidationError as exc:
            problems.append(f"runbook {n}: {'; '.join(describe(exc))}")
            continue
        if runbook.service not in services:
            problems.append(f"runbook {n} ({runbook.runbook_id}): unknown service {runbook.service}")
        runbooks.append(runbook)
    if problems:
        raise ValueError(f"invalid seeds in {directory}: " + " | ".join(problems))
    return Seeds(rows=rows, runbooks=runbooks)


def _yaml(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        loaded: dict[str, Any] = yaml.safe_load(handle)
        return loaded
