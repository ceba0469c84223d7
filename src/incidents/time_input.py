"""How a time is written into RecallOps: in words a person or a tool means, never as a bare number.

One rule for alert payloads and imported history alike; ``memory`` reads it too (a history row's
timestamp), so it imports nothing but the standard library.
"""

import re

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def written_out(value: object) -> object:
    """A time given as a number (``0``, ``0.5``, ``"1700000000"``) is refused: pydantic would read it as
    seconds since 1970, so a slip would become a date nobody meant. A ``BeforeValidator``."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value.strip())):
        raise ValueError(
            f"{value!r} is a number, not a time: write it in ISO 8601, e.g. 2026-11-29T21:00:00Z"
        )
    return value
