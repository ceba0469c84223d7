"""What a command prints keeps its shape when it wraps: each line goes on under its own indent and
list marker, and an incident id or a URL is never cut."""

import pytest

from web.cli.text import hanging

RECORD = (
    "1. Connection pool was sized for average load\n"
    "   Recorded root causes:\n"
    "   - The checkout-service pool (maximumPoolSize=20 per pod) was sized for average load [INC-2025-014]\n"
    "  A draft's field, indented by review show, longer than any terminal is wide at all"
)


@pytest.mark.parametrize("width", [80, 40])
def test_long_lines_go_on_under_their_indent_and_marker(width: int) -> None:
    lines = hanging(RECORD, width).splitlines()
    assert all(len(line) <= width for line in lines), lines
    bullet = next(n for n, line in enumerate(lines) if line.startswith("   - "))
    assert lines[bullet + 1].startswith("     ") and lines[bullet + 1][5] != " "
    field = next(n for n, line in enumerate(lines) if line.startswith("  A draft's"))
    assert all(line.startswith("  ") and line[2] != " " for line in lines[field:])
    assert "[INC-2025-014]" in " ".join(lines) and "checkout-service" in " ".join(lines)


def test_short_lines_and_blank_lines_are_left_as_they_are() -> None:
    text = "heading\n\n   - short item\n"
    assert hanging(text, 80) == "heading\n\n   - short item"
