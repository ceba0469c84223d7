"""``recallops memory``: the memory outbox, from the operator's side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from web.cli.common import run

if TYPE_CHECKING:
    from incidents.resolution.outbox import QueueStats

app = typer.Typer(help="Memory: the outbox of writes owed to the memory bank.", no_args_is_help=True)


if TYPE_CHECKING:
    from web.app.container import Container


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
) -> None:
    """Deliver every memory write that is due now (safe beside a running server: claims are exclusive).

    Exits 1 when writes are still failing, so a script can tell memory is still unreachable.
    """
    synced, failed, stats = run(_sync(retry_failed))
    typer.echo(f"synced {synced}, failed {failed}; queue: {stats.pending} pending, {stats.failing} failing")
    if stats.oldest_unsynced_at is not None:
        typer.echo(f"oldest unsynced write since {stats.oldest_unsynced_at.isoformat()}")
    if stats.failing:
        raise typer.Exit(code=1)
