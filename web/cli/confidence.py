"""``recallops confidence status | refit | rollback``: the precedent confidence fitted to this team."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import typer

if TYPE_CHECKING:
    from web.app.container import Container

app = typer.Typer(
    help="Precedent confidence fitted to your incidents: status, refit, rollback.", no_args_is_help=True
)
T = TypeVar("T")


def _with_container(work: Callable[[Container], T]) -> T:
    from web.app.container import Container
    from web.cli.common import run

    container = Container.build()
    try:
        return work(container)
    finally:
        run(container.aclose())


@app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Which fit briefings use, on how many of your incidents, its held-out ECE, the probability it lists
    precedents from and the last refit."""
    from web.app import confidence

    found = _with_container(confidence.status)
    if as_json:
        data = found.__dict__ | {"last_refit": found.last_refit.isoformat() if found.last_refit else None}
        typer.echo(json.dumps(data | {"sentence": found.sentence}))
        return
    typer.echo(found.sentence)
    typer.echo(f"{found.pending} label(s) given or changed since the last refit.")


@app.command("refit")
def refit() -> None:
    """Refit now from every label of the bank (resuming automatic refits after a rollback); adopted only if
    no worse on held-out folds."""
    from web.app import confidence

    row = _with_container(lambda c: confidence.refit(c, force=True))
    if row is None:
        typer.echo("Nothing to refit: the bank holds no label yet.")
        return
    verdict = "adopted" if row.adopted else "not adopted (worse than the fit in use on held-out folds)"
    typer.echo(
        f"fit v{row.version} on {row.labels} labels ({row.engineer_labels} by engineers): held-out log "
        f"loss {row.held_out_loss:.4f} against {row.current_loss:.4f} for the fit in use, "
        f"ECE {row.ece:.3f}; {verdict}."
    )


@app.command("rollback")
def rollback() -> None:
    """Stop using the current fit: back to the adopted fit before it, or to the shipped one. Automatic
    refits pause until `recallops confidence refit`."""
    from web.app import confidence

    left, now = _with_container(confidence.rollback)
    if left is None:
        typer.echo("The shipped fit is in use already; nothing to roll back.")
        return
    typer.echo(
        f"Rolled back fit v{left}; now using {f'fit v{now}' if now else 'the shipped fit'}. Automatic refits "
        "are paused until `recallops confidence refit`."
    )
