"""One order of alert severities, read by incident escalation and by the team profile's ranking.

Known severities, most urgent first; anything else ranks below them all, so an unexpected label
never displaces a known one.
"""

from collections.abc import Iterable

SEVERITY_RANK: dict[str, int] = {
    "critical": 6,
    "page": 6,
    "high": 5,
    "error": 5,
    "major": 5,
    "warning": 4,
    "minor": 3,
    "low": 2,
    "info": 1,
}


def outranks(severity: str, than: str) -> bool:
    """Whether ``severity`` is more urgent than ``than`` (an unknown one outranks nothing known)."""
    return SEVERITY_RANK.get(severity, 0) > SEVERITY_RANK.get(than, 0)


def worst(severities: Iterable[str]) -> str:
    """The most urgent of ``severities``, the first of those ranked alike."""
    return max(severities, key=lambda severity: SEVERITY_RANK.get(severity, 0))
