"""``recallops notify``: delivery channels from the operator's side (status, retry, a test message).

Commands read the same configuration as the server (``RECALLOPS_NOTIFY_CONFIG`` or
``RECALLOPS_NOTIFY_CHANNELS``) and never print a channel's secret: channels appear by name and label.
``status`` also lists the channels the service routes to, which a shell without their secrets lacks.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

import typer

from web.cli.common import refuse, run

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from incidents.delivery.models import Delivery
    from web.app.notify.notifier import Notifier

app = typer.Typer(help="Delivery channels: Slack, Apprise (chat, email) and webhooks.", no_args_is_help=True)


@contextmanager
def _configured() -> Iterator[tuple[sessionmaker[Session], Notifier]]:
    from incidents.database import make_engine, make_session_factory, ready_schema
    from web.app.notify.notifier import Notifier
    from web.app.settings import Settings

    settings = Settings()
    # A channel the configuration gets wrong ends the command as any bad setting does (exit 2).
    notifier = Notifier.load(settings.notify, base_url=f"http://{settings.web.host}:{settings.web.port}")
    engine = make_engine(settings.database_url)
    try:
        ready_schema(engine, migrate=settings.incidents.migrate_on_start, wait_s=0)
        yield make_session_factory(engine), notifier
    finally:
        engine.dispose()


def _configured_names(sessions: sessionmaker[Session], notifier: Notifier) -> set[str]:
    """The channels the service routes to (what it wrote at start) and this shell's own: a shell
    without the service's configuration (an admin's, with only the database URL) still knows them."""
    from incidents.delivery.routing import enabled_routes

    with sessions() as db:
        return {route.name for route in enabled_routes(db_session=db)} | set(notifier.channels)


def _require(channel: str, configured: set[str]) -> None:
    """Refuse naming the configured channels when ``channel`` is none of them (a typo did nothing)."""
    if channel not in configured:
        known = ", ".join(sorted(configured)) or "none"
        refuse(f"no channel {channel!r} is configured (configured: {known})")


@app.command()
def status() -> None:
    """Every channel: its label, messages by state, the last send, the last error with its time, and
    until when its receiver asked it to wait."""
    from incidents.delivery import outbox
    from incidents.delivery.routing import channel_labels

    with _configured() as (sessions, notifier), sessions() as db:
        configured_names = _configured_names(sessions, notifier)
        labels = channel_labels(db_session=db)
        found = {line.channel: line for line in outbox.channel_status(db_session=db)}
        depth = outbox.depth(db_session=db)
    names = sorted(configured_names | set(found))
    if not names:
        typer.echo("no delivery channels configured (RECALLOPS_NOTIFY_CONFIG or RECALLOPS_NOTIFY_CHANNELS)")
        return
    for name in names:
        configured = "" if name in configured_names else " (no longer configured)"
        line = found.get(name)
        counts = ", ".join(f"{n} {state}" for state, n in line.counts.items() if n) if line else "nothing yet"
        typer.echo(f"{name}  {labels.get(name, '')}{configured}: {counts}")
        if line and line.last_sent_at:
            typer.echo(f"  last sent {line.last_sent_at.isoformat(timespec='seconds')}")
        if line and line.last_error:
            when = f" {line.last_error_at.isoformat(timespec='seconds')}" if line.last_error_at else ""
            typer.echo(f"  last error{when}: {line.last_error}")
        if line and line.held_until:
            typer.echo(f"  {_held(line.held_until)}; nothing is sent before")
    typer.echo(f"outbox: {depth['pending']} pending, {depth['failing']} failing")


def _held(until: datetime) -> str:
    return f"held until {until.isoformat(timespec='seconds')}: the receiver asked to wait (Retry-After)"


@app.command()
def retry(
    channel: str | None = typer.Argument(None, help="Only this channel (default: every channel)."),
) -> None:
    """Make failed and failing messages (other than test messages) due now, with a fresh retry window."""
    from incidents.database import transaction
    from incidents.delivery import outbox
    from incidents.locking import serialized_writes

    with _configured() as (sessions, notifier):
        if channel is not None:
            _require(channel, _configured_names(sessions, notifier))  # the service sends them: no secret
        with transaction(sessions) as db, serialized_writes(db):
            count = outbox.retry(db_session=db, channel=channel)
            db.commit()
    typer.echo(f"{count} message(s) queued again")


async def _send_test(
    sessions: sessionmaker[Session], notifier: Notifier, channel: str, within_s: float
) -> Delivery:
    """Owe one test message, then send it (or wait while a running server's worker does).

    Every send is cut off at what is left of ``within_s``, so this returns in about that time however
    the receiver behaves."""
    import asyncio

    from incidents.database import transaction
    from incidents.delivery import outbox
    from incidents.delivery.models import Delivery
    from incidents.delivery.routing import TEST
    from incidents.locking import serialized_writes
    from web.app.notify.deliver import deliver_due

    deadline = time.monotonic() + within_s
    with transaction(sessions) as db, serialized_writes(db):
        row = outbox.owe_one(db_session=db, channel=channel, event=TEST, data={"channel": channel})
        db.commit()
    while True:
        left = deadline - time.monotonic()
        if left > 0:
            timeout = min(notifier.settings.notify_timeout_s, left)
            await deliver_due(sessions, notifier, limit=1, only_ids=[row.id], timeout_s=timeout)
        with sessions() as db:
            current = db.get(Delivery, row.id)
        assert current is not None
        if current.state != "pending" or time.monotonic() >= deadline:
            return current
        await asyncio.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


@app.command()
def test(
    channel: str = typer.Argument(..., help="The channel's name in the configuration."),
    timeout: float = typer.Option(30.0, min=0.1, help="Seconds to wait for the outcome."),
) -> None:
    """Send a test message through the outbox to one channel and print what happened (exit 1 if not sent)."""
    from incidents.delivery.holds import channel_holds

    with _configured() as (sessions, notifier):
        _require(channel, _configured_names(sessions, notifier))
        if channel not in notifier.channels:
            refuse(
                f"channel {channel!r} is the service's, but this shell has not its configuration: "
                "send the test with RECALLOPS_NOTIFY_CONFIG or RECALLOPS_NOTIFY_CHANNELS "
                "as the service has them"
            )
        label = notifier.channels[channel].label()
        with sessions() as db:
            hold = channel_holds(db_session=db).get(channel)
        if hold is not None:
            # Queued now, the message would go out when the wait ends, long after this command.
            answer = f", answering {hold.reason}" if hold.reason else ""
            typer.echo(f"{_held(hold.until)}{answer}; no test is sent before ({channel}, {label})", err=True)
            raise typer.Exit(code=1)
        row = run(_send_test(sessions, notifier, channel, timeout))
    if row.state == "sent":
        typer.echo(f"sent to {channel} ({label})")
        return
    typer.echo(f"{row.state}: {row.last_error or 'not sent yet'} ({channel}, {label})", err=True)
    raise typer.Exit(code=1)
