"""Pydantic's refusals said per field in a person's words, for the forms and the review queue.

Pydantic words its errors for programmers ("String should have at least 1 character", "Value error,
...", one error per member of a ``datetime | date`` union); the people filling in a post-mortem or a
draft need to read what to change in which field.
"""

from pydantic import ValidationError

BLANK = "must not be blank"
NOT_A_TIME = "must be a date or a time, e.g. 2026-03-14 or 2026-03-14T09:42:00Z"


def _words(error: dict[str, object]) -> str:
    kind = str(error.get("type", ""))
    ctx = error.get("ctx")
    limits = ctx if isinstance(ctx, dict) else {}
    empty = error.get("input") in ("", None)
    if kind == "missing" or (kind == "string_too_short" and limits.get("min_length") == 1):
        return BLANK
    if kind == "string_too_long":
        return f"at most {limits.get('max_length')} characters"
    if kind.startswith(("datetime_", "date_")):
        return BLANK if empty else NOT_A_TIME
    return str(error.get("msg", "invalid")).removeprefix("Value error, ")


def errors_by_field(exc: ValidationError) -> dict[str, str]:
    """The first refusal of each field, in words ("must not be blank"), keyed by the field's name."""
    found: dict[str, str] = {}
    for error in exc.errors():
        name = str(error["loc"][0]) if error.get("loc") else "form"
        found.setdefault(name, _words(dict(error)))
    return found
