"""``recallops seed`` and ``recallops import``: history into the incident store and memory."""

from __future__ import annotations

import getpass
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from web.cli.common import ALLOW_OTHER_MEMORY, memory_guard, refuse, run

if TYPE_CHECKING:
    from rich.progress import Progress

    from incidents.history import Origin
    from memory.service import HistoryRow, Rejections
    from web.app.container import Container
    from web.app.history import ImportSummary


def progress_bar() -> Progress:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )


def _stored(summary: ImportSummary) -> int:
    """The rows now in history as their lines say: imported, updated, or there already as they were."""
    return summary.imported + summary.updated + summary.unchanged


def _outcome(summary: ImportSummary) -> str:
    """What became of the lines, as the bar's last line says it: "3 stored, 1 already stored, 2 rejected"."""
    already = f", {summary.unchanged} already stored" if summary.unchanged else ""
    stored = summary.imported + summary.updated
    return f"{stored} stored{already}, {summary.rejected_count} rejected"


async def _import_under_bar(
    container: Container,
    *,
    name: str,
    rows: list[tuple[int, HistoryRow]],
    origin: Origin,
    actor: str,
    replace: bool,
    rejections: Rejections | None = None,
) -> ImportSummary:
    """``import_history`` under a progress bar over every line of ``name``, the lines the parser already
    rejected counted as gone through; its last line says how many were stored and how many rejected
    (by the parser or when stored), not only that every line was gone through."""
    from web.app.history import import_history

    refused = rejections.count if rejections is not None else 0
    with progress_bar() as progress:
        task = progress.add_task(f"importing {name}", total=len(rows) + refused, completed=refused)
        summary = await import_history(
            sessions=container.sessions,
            bank=container.bank,
            rows=rows,
            origin=origin,
            actor=actor,
            replace=replace,
            rejections=rejections,
            on_progress=lambda n: progress.advance(task, n),
        )
        progress.update(task, description=f"{name}: {_outcome(summary)}")
    return summary


def _report(summary: ImportSummary, name: str) -> None:
    if summary.rejected_count and not _stored(summary):
        _every_line_rejected(name, summary.rejected_count)
    else:
        typer.echo(
            f"imported {summary.imported}, updated {summary.updated}, unchanged {summary.unchanged}, "
            f"rejected {summary.rejected_count}"
            + (f", runbooks {summary.runbooks}" if summary.runbooks else "")
            + f"; new to memory {summary.new_to_memory}"
        )
    _rejections(summary)


def _every_line_rejected(name: str, count: int) -> None:
    lines = f"{count} line{'s' if count != 1 else ''}"
    typer.echo(f"nothing imported from {name}: every line was rejected ({lines})")


def _rejections(summary: ImportSummary) -> None:
    """Each rejected line shown with its reasons, and how to list those past the page."""
    for rejected in summary.rejected:
        who = f" ({rejected.incident_id})" if rejected.incident_id else ""
        typer.echo(f"  line {rejected.line}{who}: {'; '.join(rejected.reasons)}")
    if summary.rejected_next is not None:
        typer.echo(
            f"  more rejected lines: run again with --rejected-after {summary.rejected_next} to list them"
        )


def seed(
    directory: Path | None = typer.Option(
        None, "--dir", help="Seed directory: incidents, runbooks, services (default: the demo's)."
    ),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Load the Meridian Commerce demo history. Safe to run again: each incident stays one record."""
    from web.app.container import Container
    from web.app.history import SEEDS_DIR, load_seeds, retain_runbooks

    seeds = load_seeds(directory or SEEDS_DIR)
    memory_guard(writes=True, allowed=allow_other_memory)

    async def work() -> ImportSummary:
        container = Container.build()
        try:
            summary = await _import_under_bar(
                container, name="the seeds", rows=seeds.rows, origin="seed", actor="seed", replace=True
            )
            summary.runbooks = await retain_runbooks(container.bank, seeds.runbooks)
            return summary
        finally:
            await container.aclose()

    _finish(work, "the seeds")


def import_(
    paths: list[Path] = typer.Argument(
        ...,
        exists=True,
        help="Folders or files: post-mortems (.md, .txt, .html), PagerDuty or incident.io exports "
        "(.csv, .json), or labeled history (.jsonl).",
    ),
    by: str = typer.Option("", "--by", help="Who imports (kept as imported_by); default: the OS user."),
    accept_all: bool = typer.Option(
        False, "--accept-all", help="Accept every complete draft at once instead of reviewing each."
    ),
    accept_revisions: bool = typer.Option(
        False,
        "--accept-revisions",
        help="With --accept-all, accept revisions too: each replaces the record of the incident it revises.",
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Rewrite labeled records already in history (the replaced version is kept)."
    ),
    rejected_after: int = typer.Option(
        0, "--rejected-after", min=0, help="List the rejected lines after this line (100 at most)."
    ),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Import history. Labeled JSONL rows become resolved incidents in memory at once; free-form
    post-mortems and tools' exports become drafts to review (`recallops review`, the /review page), or
    with --accept-all go to memory in bulk.

    A changed version of a post-mortem imported before is drafted as a revision of its incident:
    accepting it replaces that incident's record, and --accept-all leaves it for review unless
    --accept-revisions. A labeled row whose id is already history with other content is rejected
    unless --replace.
    Exits 1 when any record or file was rejected or (with --accept-all) a draft was left for review;
    the rest is imported. Exits 2, importing nothing, when the paths hold no file at all. Drafting
    without --accept-all is the review flow, and exits 0.
    """
    from memory.service import collect, is_labeled_history
    from web.cli.review import import_free_form

    actor = by.strip() or f"cli:{getpass.getuser()}"
    found = collect(paths)  # a folder's labeled history is imported as the same file named alone is
    labeled = [path for path, _ in found if is_labeled_history(path)]
    free_form = [(path, name) for path, name in found if not is_labeled_history(path)]
    memory_guard(writes=bool(labeled) or accept_all, allowed=allow_other_memory)
    failed = any([_import_labeled(path, actor, replace, rejected_after) for path in labeled])
    if free_form or not labeled:
        failed = (
            import_free_form(
                free_form, paths, actor=actor, accept_all=accept_all, accept_revisions=accept_revisions
            )
            or failed
        )
    if failed:
        raise typer.Exit(code=1)


def _import_labeled(path: Path, actor: str, replace: bool, rejected_after: int) -> bool:
    """One labeled JSONL file into the incident store and memory; True when something was rejected."""
    from memory.service import Rejections, UnreadableImport, parse_rows
    from web.app.container import Container

    rejections = Rejections(after=rejected_after)
    try:
        rows = parse_rows(path.read_text(encoding="utf-8"), rejections)
    except UnicodeDecodeError as exc:
        typer.echo(
            f"{path.name}: not UTF-8 (byte {exc.start}); save the file as UTF-8 and import it again", err=True
        )
        return True
    except UnreadableImport as exc:
        typer.echo(f"{path.name}: {exc}", err=True)
        return True
    if not rows:
        return _nothing_imported(path, rejections)

    async def work() -> ImportSummary:
        container = Container.build()
        try:
            return await _import_under_bar(
                container,
                name=path.name,
                rows=rows,
                origin="import",
                actor=actor,
                replace=replace,
                rejections=rejections,
            )
        finally:
            await container.aclose()

    return bool(_finish(work, path.name).rejected_count)


def _nothing_imported(path: Path, rejections: Rejections) -> bool:
    """A file with no line that reads as a record, said plainly with why, before anything is opened
    (a progress bar over no row read "0/0"); it counts as a rejected file (exit 1)."""
    from web.app.history import ImportSummary

    if not rejections.count:
        typer.echo(f"nothing imported from {path.name}: it holds no line")
        return True
    _every_line_rejected(path.name, rejections.count)
    shown = rejections.shown()
    _rejections(
        ImportSummary(rejected_count=rejections.count, rejected=shown, rejected_next=rejections.next_after())
    )
    return True


def _finish(work: Callable[[], Coroutine[Any, Any, ImportSummary]], name: str) -> ImportSummary:
    from memory.service import MemoryUnavailable

    try:
        summary = run(work())
    except MemoryUnavailable as exc:
        refuse(f"memory unavailable: {exc}. Run the command again to finish.")
    _report(summary, name)
    return summary
