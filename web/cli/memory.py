"""``recallops memory``: the memory outbox, and copying another bank into the configured one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from web.cli.common import ALLOW_OTHER_MEMORY, memory_guard, refuse, run

if TYPE_CHECKING:
    from incidents.resolution.outbox import QueueStats
    from memory.service import CopyReport, MemorySettings
    from web.app.container import Container
    from web.app.settings import Settings

app = typer.Typer(
    help="Memory: the outbox of writes owed to the memory bank, and copying a bank into it.",
    no_args_is_help=True,
)


async def drain(container: Container) -> tuple[int, int, QueueStats]:
    """Deliver what is due until nothing is, or a write fails: (synced, failed, the queue after)."""
    from incidents.resolution import outbox
    from web.app.memory_outbox import deliver_due

    synced = failed = 0
    while True:
        report = await deliver_due(container)
        synced, failed = synced + report["synced"], failed + report["failed"]
        if report.attempted == 0 or report["failed"]:
            break
    with container.sessions() as db:
        return synced, failed, outbox.queue_stats(db_session=db)


async def _sync(retry_failed: bool) -> tuple[int, int, QueueStats]:
    from incidents.database import transaction
    from incidents.locking import serialized_writes
    from incidents.resolution import outbox
    from web.app.container import Container

    container = Container.build()
    try:
        if retry_failed:
            with transaction(container.sessions) as db, serialized_writes(db):
                outbox.retry_failed(db_session=db)
                db.commit()
        return await drain(container)
    finally:
        await container.aclose()


@app.command()
def sync(
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Retry failing writes now instead of at their next backed-off attempt."
    ),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Deliver every memory write that is due now (safe beside a running server: claims are exclusive).

    Exits 1 when writes are still failing, so a script can tell memory is still unreachable.
    """
    memory_guard(writes=True, allowed=allow_other_memory)
    synced, failed, stats = run(_sync(retry_failed))
    typer.echo(f"synced {synced}, failed {failed}; queue: {stats.pending} pending, {stats.failing} failing")
    if stats.oldest_unsynced_at is not None:
        typer.echo(f"oldest unsynced write since {stats.oldest_unsynced_at.isoformat()}")
    if stats.failing:
        raise typer.Exit(code=1)


@app.command("copy")
def copy_(
    from_embedded: Path | None = typer.Option(
        None,
        "--from-embedded",
        metavar="DIR",
        help="Copy the embedded bank kept in DIR (a data directory holding memory.db, or that file).",
    ),
    from_hindsight: str | None = typer.Option(
        None, "--from-hindsight", metavar="URL", help="Copy a bank of the Hindsight server at URL."
    ),
    from_bank: str | None = typer.Option(
        None,
        "--from-bank",
        metavar="BANK",
        help="The bank to copy on --from-hindsight's server (default: RECALLOPS_BANK_ID).",
    ),
    from_api_key: str | None = typer.Option(
        None,
        "--from-api-key",
        envvar="RECALLOPS_COPY_FROM_API_KEY",
        metavar="KEY",
        help="The API key of --from-hindsight's server, if it has one (better set in the variable).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be copied; write nothing."),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Copy every record of another memory bank into the configured one (RECALLOPS_MEMORY and its settings).

    Incidents, corrections and runbooks keep their ids, text, tags, metadata and timestamps, so the
    precedents stored briefings cite still resolve. A record the configured bank already holds as it
    is stays as it is: running the copy again copies nothing new. Exits 1 when a record could not be
    copied (run it again to finish).
    """
    from web.app.settings import Settings

    settings = Settings()
    source = _source(settings, from_embedded, from_hindsight, from_bank, from_api_key)
    if source.location == settings.memory.location:
        refuse(f"the source is the configured memory itself ({source.location})")
    memory_guard(writes=not dry_run, allowed=allow_other_memory, moving_from=source.location)
    verb = "would copy" if dry_run else "copying"
    typer.echo(f"{verb} from {source.location} to {settings.memory.location}")
    report = run(_copy(settings, source, dry_run))
    _print_copy(report)
    if report.failed_count:
        raise typer.Exit(code=1)


def _source(
    settings: Settings,
    from_embedded: Path | None,
    from_hindsight: str | None,
    from_bank: str | None,
    from_api_key: str | None,
) -> MemorySettings:
    """The source's memory settings: the configured ones with the driver and place the options name."""
    if (from_embedded is None) == (from_hindsight is None):
        refuse("memory copy takes one source: --from-embedded DIR or --from-hindsight URL")
    if from_embedded is not None:
        if from_bank is not None:
            refuse("--from-bank names a bank of --from-hindsight's server; an embedded bank is its directory")
        return settings.memory.model_copy(update={"memory": "embedded", "data_dir": _data_dir(from_embedded)})
    return settings.memory.model_copy(
        update={
            "memory": "hindsight",
            "hindsight_base_url": from_hindsight,
            "bank_id": from_bank or settings.memory.bank_id,
            "hindsight_api_key": from_api_key,
        }
    )


def _data_dir(given: Path) -> Path:
    """The data directory holding the embedded bank ``--from-embedded`` names: the directory, or the
    ``memory.db`` file in it itself; a directory one level above (the one holding ``./data``) is
    refused naming the directory below that holds one."""
    if given.name == "memory.db" and given.is_file():
        return given.parent
    if (given / "memory.db").is_file():
        return given
    below = sorted(found.parent for found in given.glob("*/memory.db"))[:3] if given.is_dir() else []
    hint = ""
    if below:
        named = " and ".join(str(path) for path in below)
        hint = f", but {named} {'does' if len(below) == 1 else 'do'} (--from-embedded {below[0]})"
    refuse(f"no embedded memory in {given}: it holds no memory.db{hint}")


async def _copy(settings: Settings, memory: MemorySettings, dry_run: bool) -> CopyReport:
    from memory.service import MemoryUnavailable, copy_bank
    from web.app.container import Container

    container = Container.build(settings)
    try:
        try:
            source = container.open_other_bank(memory)
        except ValueError as exc:  # a bank id no driver accepts
            refuse(str(exc))
        try:
            report = await copy_bank(source, container.bank, dry_run=dry_run)
        except MemoryUnavailable as exc:
            refuse(f"cannot read {memory.location}: {exc}")
        finally:
            await source.close()
    finally:
        await container.aclose()
    if report.stopped is not None and not (report.copied or report.already_there or report.failed):
        refuse(f"cannot copy into {settings.memory.location}: {report.stopped}")
    return report


def _print_copy(report: CopyReport) -> None:
    from memory.service import document_line

    if report.dry_run:
        for write in report.copied:
            typer.echo(f"  would copy {document_line(write)}")
        for model_id in report.skipped_models:
            typer.echo(f"  would skip mental model {model_id}")
    for document_id, why in report.failed:
        typer.echo(f"  failed {document_id}: {why}")
    if report.skipped_models:
        typer.echo(_skipped_models(report))
    if report.stopped is not None:
        typer.echo(f"stopped: {report.stopped}; {report.not_tried} records not tried: run the copy again")
    if report.dry_run:
        typer.echo(f"would copy {len(report.copied)}, already there {report.already_there}")
    else:
        typer.echo(
            f"copied {len(report.copied)}, already there {report.already_there}, failed {report.failed_count}"
        )


NAMED_SKIPPED = 3  # mental models a copy names on its skipped line; a dry run lists every one


def _skipped_models(report: CopyReport) -> str:
    """One line: how many mental models were not copied and why; a copy names the first few (a bank may
    hold dozens), a dry run none, since it listed each above."""
    models = report.skipped_models
    count = f"{len(models)} mental model{'' if len(models) == 1 else 's'}"
    why = "the configured memory builds its own profile from the records (recallops profile refresh)"
    if report.dry_run:
        return f"would skip {count}: {why}"
    named = ", ".join(models[:NAMED_SKIPPED])
    if len(models) > NAMED_SKIPPED:
        named += f" and {len(models) - NAMED_SKIPPED} more"
    return f"skipped {count} ({named}): {why}"
