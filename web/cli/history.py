"""``recallops seed`` and ``recallops import``: history into the incident store and memory."""

import asyncio
import getpass
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memory.service import MemoryUnavailable, UnreadableImport, parse_rows
from web.app.container import Container
from web.app.history import SEEDS_DIR, ImportSummary, import_history, load_seeds, retain_runbooks

console = Console(stderr=True)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _report(summary: ImportSummary) -> None:
    typer.echo(
        f"imported {summary.imported}, updated {summary.updated}, unchanged {summary.unchanged}, "
        f"rejected {len(summary.rejected)}" + (f", runbooks {summary.runbooks}" if summary.runbooks else "")
    )
    for rejected in summary.rejected:
        who = f" ({rejected.incident_id})" if rejected.incident_id else ""
        typer.echo(f"  line {rejected.line}{who}: {'; '.join(rejected.reasons)}")


def seed(
    directory: Path = typer.Option(SEEDS_DIR, "--dir", help="Seed directory: incidents, runbooks, services."),
) -> None:
    """Load the Meridian Commerce demo history. Safe to run again: each incident stays one record."""
    seeds = load_seeds(directory)

    async def run() -> ImportSummary:
        container = Container.build()
        try:
            with _progress() as progress:
                task = progress.add_task("seeding incidents", total=len(seeds.rows))
                summary = await import_history(
                    sessions=container.sessions,
                    bank=container.bank,
                    rows=seeds.rows,
                    origin="seed",
                    actor="seed",
                    on_progress=lambda n: progress.advance(task, n),
                )
            summary.runbooks = await retain_runbooks(container.bank, seeds.runbooks)
            return summary
        finally:
            await container.aclose()

    _finish(run)


def import_(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSONL file or JSON list."),
    by: str = typer.Option("", "--by", help="Who imports (kept as imported_by); default: the OS user."),
) -> None:
    """Import historical post-mortems (one JSON record per line) as resolved incidents in memory.

    Exits 1 when any record was rejected; the others are imported either way.
    """
    try:
        rows, rejected = parse_rows(path.read_text(encoding="utf-8"))
    except UnreadableImport as exc:
        typer.echo(f"{path.name}: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    actor = by.strip() or f"cli:{getpass.getuser()}"

    async def run() -> ImportSummary:
        container = Container.build()
        try:
            with _progress() as progress:
                task = progress.add_task(f"importing {path.name}", total=len(rows))
                return await import_history(
                    sessions=container.sessions,
                    bank=container.bank,
                    rows=rows,
                    origin="import",
                    actor=actor,
                    rejected=rejected,
                    on_progress=lambda n: progress.advance(task, n),
                )
        finally:
            await container.aclose()

    summary = _finish(run)
    if summary.rejected:
        raise typer.Exit(code=1)


def _finish(run: Callable[[], Coroutine[Any, Any, ImportSummary]]) -> ImportSummary:
    try:
        summary = asyncio.run(run())
    except MemoryUnavailable as exc:
        typer.echo(f"memory unavailable: {exc}. Run the command again to finish.", err=True)
        raise typer.Exit(code=2) from exc
    _report(summary)
    return summary
