"""One order of alert severities, read by incident escalation and by the team profile's ranking.

Known severities, most urgent first; anything else ranks below them all, so an unexpected label
never displaces a known one.
"""

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
