"""What the operator got wrong, said in one line: settings, addresses and files a command could not use,
and options or arguments the command line could not parse.

Imported only when a command fails, so the libraries named here cost nothing on the way in.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typer import TyperException

_LINK = re.compile(r"\s*\(Background on this error at: [^)]*\)")
# How pydantic-settings says a list setting's value is not JSON: the field and the source, no variable.
_UNPARSED = re.compile(r'error parsing value for field "(?P<field>\w+)" from source "(?P<source>\w+)"')


def _named(loc: tuple[str | int, ...], settings: bool) -> str:
    """Where a value is wrong; a setting by the variable the operator sets (``RECALLOPS_PORT``)."""
    parts = [str(part) for part in loc]
    if settings and parts:
        parts[0] = f"RECALLOPS_{parts[0].upper()}"
    return ".".join(parts)


def _unparsed(exc: Exception) -> str:
    """A list setting whose value is not JSON (``RECALLOPS_TRUSTED_PROXIES=10.0.0.5``), by its variable:
    pydantic-settings names the field and its own source class, which the operator never wrote."""
    cause = f" ({exc.__cause__})" if exc.__cause__ else ""
    found = _UNPARSED.search(str(exc))
    if found is None:
        return f"a setting cannot be read: {exc}{cause}".replace("\n", " ")
    where = " in .env" if "DotEnv" in found["source"] else ""
    return (
        f"RECALLOPS_{found['field'].upper()}{where} is not JSON{cause}: "
        'it takes a JSON list, e.g. ["first", "second"]'
    ).replace("\n", " ")


def user_error(exc: BaseException) -> str | None:
    """A one-line reason when ``exc`` comes from the operator's settings, address or file, else None."""
    import httpx
    from pydantic import ValidationError
    from pydantic_settings import SettingsError
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    from incidents.database import SchemaNotReady, Unusable
    from web.app.history import InvalidSeeds
    from web.app.notify.config import NotifyConfigError

    if isinstance(exc, SettingsError):
        return _unparsed(exc)
    if isinstance(exc, ValidationError):
        settings = exc.title.endswith("Settings")
        problems = "; ".join(
            f"{_named(error['loc'], settings)}: {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        )
        return f"invalid setting: {problems}"
    if isinstance(exc, NotifyConfigError | Unusable | SchemaNotReady | InvalidSeeds):
        return str(exc)
    if isinstance(exc, NoSuchModuleError | ArgumentError):
        return f"the database URL (RECALLOPS_DATABASE_URL or DATABASE_URL) is not usable: {exc}"
    if isinstance(exc, OperationalError):
        reason = _LINK.sub("", str(exc.orig)).strip().splitlines()
        return f"cannot reach the database: {reason[0] if reason else type(exc.orig).__name__}"
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 (byte {exc.start}); save it as UTF-8"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"cannot read {exc.filename}: {exc.strerror}"
    if isinstance(exc, httpx.TransportError):  # the address answers nothing (refused, no route, timeout)
        return f"cannot reach {exc.request.url}: {exc}"
    return None


def usage_line(exc: TyperException) -> str | None:
    """An option, argument or command the parser refused, in one line that names it and where the
    command's help is: Click's own report is four lines with the usage and a blank line before the
    reason, which a log or a script's ``2>&1`` shows as noise around the one line that matters.

    None when there is nothing to correct: a command group given no command answers with its help."""
    message = exc.format_message()
    if message.startswith("Usage:"):
        return None
    reason = " ".join(message.replace("Value error, ", "").split()).rstrip(".")
    if reason[:2].istitle():  # "Invalid value", "No such option": mid-sentence after "recallops: "
        reason = reason[0].lower() + reason[1:]
    ctx = getattr(exc, "ctx", None)
    return f"{reason} (see `{ctx.command_path} --help`)" if ctx is not None else reason
