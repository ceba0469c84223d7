"""``recallops grades [--since 30d|2026-11-01]``: how past briefings did against their post-mortems.

One line per graded briefing version (newest first), then the count, mean score and the share of them that
scored 100 over the same window. With ``--json`` an object with ``grades`` and ``summary``.
"""

import json
import re
from datetime import UTC, datetime, timedelta

import typer

from web.cli.common import cli_session

_DAYS = re.compile(r"^(\d{1,5})d$")


def parse_since(value: str | None, now: datetime) -> datetime | None:
    """``30d`` (days back from now) or an ISO date or timestamp (UTC when it names no zone)."""
    if not value:
        return None
    days = _DAYS.match(value.strip())
    if days:
        return now - timedelta(days=int(days.group(1)))
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise typer.BadParameter(
            f"{value!r} is neither a number of days like 30d nor an ISO date", param_hint="--since"
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def grades_command(
    since: str | None = typer.Option(None, "--since", help="Only grades since: 30d, or an ISO date."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print the briefing grades (100 / 65 / 35 / 0) and their summary."""
    from incidents.grades import service as grades
    from incidents.timeutil import utcnow

    start = parse_since(since, utcnow())
    with cli_session() as session:
        rows = grades.grades_since(db_session=session, since=start)
        summary = grades.summary(db_session=session, since=start)
    if as_json:
        payload = {
            "since": start.isoformat() if start else None,
            "grades": [
                {
                    "incident": public_id,
                    "version": g.version,
                    "score": g.score,
                    "reason": g.reason,
                    "matched": g.matched,
                    "graded_at": g.created_at.isoformat(),
                }
                for g, public_id in rows
            ],
            "summary": {"count": summary.count, "mean": summary.mean, "share_at_100": summary.share_at_100},
        }
        typer.echo(json.dumps(payload))
        return
    for g, public_id in rows:
        typer.echo(f"{g.created_at:%Y-%m-%d %H:%M}  {public_id} v{g.version}  {g.score:>3}  {g.reason}")
    window = f" since {start:%Y-%m-%d %H:%M} UTC" if start else ""
    if not summary.count:
        typer.echo(f"No briefing graded{window}.")
        return
    typer.echo(
        f"{summary.count} briefing version(s) graded{window}: mean score {summary.mean} of 100; "
        f"{summary.share_at_100:.0%} of them scored 100"
    )
