"""The Jinja2 environment for the pages: autoescaping on for every template, and the few display filters.

Everything an alert sender wrote (summaries, labels, annotations) reaches a template as plain data and
is escaped on output; no template marks such text safe.
"""

from datetime import UTC, datetime
from pathlib import Path

import jinja2
from fastapi.templating import Jinja2Templates

from incidents.severity import level_name

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"


def ago(value: datetime | None, now: datetime | None = None) -> str:
    """ "3 min ago", or "in 2 min" for a time still to come (a next retry): the unit read at a glance."""
    if value is None:
        return "never"
    seconds = ((now or datetime.now(UTC)) - value).total_seconds()  # the sign before whole seconds
    return f"in {_span(int(-seconds))}" if seconds < 0 else f"{_span(int(seconds))} ago"


def next_try(value: datetime | None, now: datetime | None = None) -> str:
    """When a retry comes: "in 2 min", or "due now" once its time has passed and it waits for a worker to
    claim it (a busy lane, a worker restarting), never "3 min ago", which reads as a try that happened."""
    if value is None:
        return "not scheduled"
    return ago(value, now) if value > (now or datetime.now(UTC)) else "due now"


def _span(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def stamp(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""


def iso(value: datetime | None) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds") if value else ""


def safe_url(value: str | None) -> str | None:
    """Only http(s) links from alerts become links; ``javascript:`` and friends stay text."""
    if value and value.strip().lower().startswith(("http://", "https://")):
        return value.strip()
    return None


def make_templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ago=ago, next_try=next_try, stamp=stamp, iso=iso, safe_url=safe_url, severity_level=level_name
    )
    return Jinja2Templates(env=env)


templates = make_templates()
