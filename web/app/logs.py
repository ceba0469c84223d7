"""The process's logging, set up once by RecallOps and never by a library it imports.

A library may call ``logging.basicConfig`` when it is constructed (the MCP SDK's server does, at INFO,
which turns on httpx's line for every request and its full URL); ``basicConfig`` does nothing once
the root logger has a handler, so ``configure_logging`` installs ours first. Every line our handler
writes passes ``Scrubbed``: a URL keeps its scheme and host only (webhook paths, ntfy topics and query
tokens are secrets), and every configured secret is replaced wherever it appears. The fields a line
carries in ``extra={...}`` (the channel, the row's id, the error) follow its message as ``key=value``,
scrubbed the same way.
"""

import json
import logging
import re
import sys

from web.app.notify.config import redact

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(details)s"
# Every attribute a record has without ``extra``; uvicorn's colour copy of its message is no detail.
_STANDARD = {*vars(logging.LogRecord("", 0, "", 0, "", None, None)), "message", "asctime", "details"}
_STANDARD |= {"taskName", "color_message"}
_URL = re.compile(r"\b([a-z][a-z0-9+.-]*://)([^\s/?#\"'<>]*)([^\s\"'<>]*)", re.IGNORECASE)
_USERINFO = re.compile(r"^[^@]*@")
QUIET = ("httpx", "httpcore", "urllib3", "apprise")  # per-request lines: WARNING and above only
# Loggers left at every level because a library keeps what they say: Apprise returns each call's lines
# with its result, and a refused email's SMTP reply is only at DEBUG (``send_apprise`` reads it there).
KEPT = ("apprise",)


def scrub_urls(text: str) -> str:
    """Every URL as ``scheme://host/…``: no credentials, no path, no query."""

    def short(match: re.Match[str]) -> str:
        host = _USERINFO.sub("", match.group(2))
        return f"{match.group(1)}{host}" + ("/…" if match.group(3) else "")

    return _URL.sub(short, text)


def details(record: logging.LogRecord) -> str:
    """The record's ``extra`` fields as `` key=value``, a value with spaces or quotes quoted."""

    def shown(value: object) -> str:
        text = str(value)
        return json.dumps(text) if not text or any(c.isspace() or c in '"=' for c in text) else text

    return "".join(
        f" {key}={shown(value)}"
        for key, value in vars(record).items()
        if key not in _STANDARD and not key.startswith("_")
    )


class Scrubbed(logging.Filter):
    """Rewrites each record's message, and sets its ``details``, without URLs' paths and queries and
    without known secrets."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub_urls(redact(message, self.secrets))
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub_urls(redact(record.exc_text, self.secrets))
        if clean != message:
            record.msg, record.args = clean, None
        record.details = scrub_urls(redact(details(record), self.secrets))
        return True


class Quiet(logging.Filter):
    """Drops the lines of the ``QUIET`` loggers below WARNING (those of ``KEPT`` are still made)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        return not any(record.name == name or record.name.startswith(name + ".") for name in QUIET)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Ours, so ``configure_logging`` can tell it is already installed."""


def _ours() -> _Handler | None:
    return next((h for h in logging.getLogger().handlers if isinstance(h, _Handler)), None)


def configure_logging(level: str = "INFO") -> None:
    """Install the scrubbing handler on the root logger (once) and quiet per-request loggers."""
    if _ours() is None:
        handler = _Handler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(Quiet())
        handler.addFilter(Scrubbed())
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.DEBUG if name in KEPT else logging.WARNING)


def hide(secrets: list[str]) -> None:
    """Secrets the log must never show, whatever logs them (the delivery channels' URLs and keys)."""
    handler = _ours()
    if handler is None:
        return
    for found in handler.filters:
        if isinstance(found, Scrubbed):
            found.secrets = sorted({*found.secrets, *(s for s in secrets if s)}, key=len, reverse=True)
