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


def test_an_evidence_line_goes_on_under_its_title_not_its_number() -> None:
    line = "  [12] INC-2025-014 on checkout-service, the flash-sale pool exhaustion (uncertain)"
    lines = hanging(line, 40).splitlines()
    assert lines[0].startswith("  [12] INC-2025-014") and len(lines) > 1
    assert all(row.startswith("       ") and row[7] != " " for row in lines[1:]), lines


def test_a_table_row_is_left_whole_and_the_prose_around_it_wraps() -> None:
    row = "| learning | 30 | 0.633 | 0.867 | 2.10 | 0.750 | 0.600 | 0.041 |"
    text = f"{row}\n- learning: first precedent gained nowhere, lost nowhere; no figure worse"
    lines = hanging(text, 40).splitlines()
    assert lines[0] == row
    assert lines[2].startswith("  ") and all(len(line) <= 40 for line in lines[1:])


def test_what_memory_changed_goes_on_under_each_added_and_removed_item() -> None:
    text = (
        "  + likely causes: Root cause recorded for INC-2025-014: the pool was sized for average load\n"
        "  - first checks: Look for the error seen in INC-2025-043: remaining connection slots are reserved"
    )
    lines = hanging(text, 50).splitlines()
    added = [n for n, line in enumerate(lines) if line.startswith(("  + ", "  - "))]
    assert len(added) == 2 and added[0] == 0
    rest = [row for n, row in enumerate(lines) if n not in added]
    assert rest and all(row.startswith("    ") and row[4] != " " for row in rest), lines
