"""Copying every document of one bank into another, through the bank roles, whatever the drivers.

What moves a team's memory from one place to another (a laptop's embedded bank to a shared Hindsight
server): incidents, corrections and runbooks, each under its own id, with its text, tags, metadata,
timestamp and context, so a precedent a stored briefing cites still resolves in the new bank.

A document the target already holds as the source has it is left alone, so a second copy writes
nothing; one it holds differently is written again (replaced). Mental models (the team and service
profiles) are not copied: their content is synthesized from the records by whoever refreshes them, so
the target builds its own; they are named in the report as skipped. Operations (past refreshes) and
the embedded driver's vectors are the source's own bookkeeping and are not documents.

Writes go in batches (``retain_many``); a batch the target refuses is tried again one document at a
time, so one bad document fails alone. The source or the target failing to answer a read stops the
copy: what is left is counted as failed, and running the copy again finishes it. A source that cannot
even be listed raises ``MemoryUnavailable`` before anything is done.
"""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from memory.bank import DocumentWrite, Export, MemoryUnavailable, ProfileModels, Retain
from memory.schema import tag_value

BATCH = 64  # documents read, compared and written per round
T = TypeVar("T")


class Source(Export, ProfileModels, Protocol):
    """What a copy reads: the documents, and the mental models it reports as skipped."""


class Target(Export, Retain, Protocol):
    """What a copy writes to: it reads a document first, so one already there is not written again."""


@dataclass
class CopyReport:
    """How each document of the source ended: copied (or due, on a dry run), already there, or failed."""

    dry_run: bool
    copied: list[DocumentWrite] = field(default_factory=list)
    already_there: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (document id, why)
    not_tried: int = 0  # left when the copy stopped
    stopped: str | None = None  # why the copy stopped before the end
    skipped_models: list[str] = field(default_factory=list)

    @property
    def failed_count(self) -> int:
        return len(self.failed) + self.not_tried


def same_document(a: DocumentWrite, b: DocumentWrite) -> bool:
    """Whether two banks hold the same document: tags compared as a set (a server may reorder them)."""
    return (
        a.document_id == b.document_id
        and a.content == b.content
        and sorted(set(a.tags)) == sorted(set(b.tags))
        and a.metadata == b.metadata
        and a.timestamp == b.timestamp
        and a.context == b.context
    )


def document_line(write: DocumentWrite) -> str:
    """One document in a line: its id, kind and service (``INC-7 (incident, checkout-service)``)."""
    labels = [v for v in (tag_value(write.tags, "kind"), tag_value(write.tags, "service")) if v]
    return f"{write.document_id} ({', '.join(labels)})" if labels else write.document_id


async def copy_bank(
    source: Source,
    target: Target,
    *,
    dry_run: bool = False,
    batch: int = BATCH,
    progress: Callable[[CopyReport], None] | None = None,
) -> CopyReport:
    """Copy every document of ``source`` that ``target`` does not hold as it is; ``dry_run`` writes nothing
    and lists in ``copied`` what would be written. ``progress`` is told the report after each batch.

    Raises ``MemoryUnavailable`` when the source cannot be listed (nothing done); a read failing later
    stops the copy and says so in the report."""
    report = CopyReport(dry_run=dry_run)
    ids = await source.document_ids()  # MemoryUnavailable: nothing was done
    report.skipped_models = [model.id for model in await source.list_mental_models()]
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        try:
            due = await _due(source, target, chunk, report)
        except MemoryUnavailable as exc:
            report.stopped = str(exc)
            report.not_tried = len(ids) - start
            return report
        if dry_run:
            report.copied.extend(due)
        else:
            await _write(target, due, report)
        if progress is not None:
            progress(report)
    return report


async def _due(source: Source, target: Target, ids: Sequence[str], report: CopyReport) -> list[DocumentWrite]:
    """The source's documents among ``ids`` that the target lacks or holds otherwise; counts the rest."""
    found = await _gather([source.document(i) for i in ids])
    writes = [w for w in found if w is not None]  # one removed since it was listed is not copied
    held = await _gather([target.document(w.document_id) for w in writes])
    due = []
    for write, there in zip(writes, held, strict=True):
        if there is not None and same_document(write, there):
            report.already_there += 1
        elif not write.content:
            report.failed.append((write.document_id, "the source keeps no text for it"))
        else:
            due.append(write)
    return due


async def _write(target: Target, due: list[DocumentWrite], report: CopyReport) -> None:
    if not due:
        return
    try:
        await target.retain_many(due)
    except (MemoryUnavailable, ValueError):
        for write in due:  # one by one, so a document the target refuses fails alone
            try:
                await target.retain_many([write])
            except (MemoryUnavailable, ValueError) as exc:
                report.failed.append((write.document_id, str(exc)))
            else:
                report.copied.append(write)
    else:
        report.copied.extend(due)


async def _gather(calls: list[Awaitable[T]]) -> list[T]:
    return list(await asyncio.gather(*calls))
