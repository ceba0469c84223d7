"""``recallops profile`` as an operator runs it: a mistyped service is refused, not profiled; what it
shows keeps its shape in a narrow terminal."""

import re
import sqlite3
from pathlib import Path

from tests.support.server import LiveServer


def test_a_service_no_incident_is_on_is_refused_and_leaves_no_profile(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    operator.cli("seed")
    for command in ("refresh", "show"):
        refused = operator.cli("profile", command, "--service", "chekout-service", check=False)
        assert refused.returncode == 2, refused.stderr
        assert "'chekout-service'" in refused.stderr and "checkout-service" in refused.stderr
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        assert store.execute("SELECT count(*) FROM profile_state").fetchone() == (0,)


def test_show_keeps_each_records_indent_when_its_lines_wrap(tmp_path: Path) -> None:
    """A record's text written over several lines, or longer than the terminal, goes on under its
    bullet: nothing of a pattern but its number starts at column 0, where it would read as a new one."""
    operator = LiveServer(data_dir=tmp_path / "data")
    operator.cli("seed")
    operator.cli("profile", "refresh", "--wait")
    for width in (80, 40):
        shown = LiveServer(data_dir=tmp_path / "data", env={"COLUMNS": str(width)}).cli("profile", "show")
        lines = shown.stdout.splitlines()
        assert all(len(line) <= width or " " not in line.strip() for line in lines), (width, shown.stdout)
        profile = lines[lines.index("") + 1 :]
        assert "   Early warning signals:" in profile
        at_column_0 = [line for line in profile[1:] if line and not line.startswith(" ")]
        assert at_column_0 and all(re.match(r"\d+\. ", line) for line in at_column_0), (width, at_column_0)
        continued = [n for n, line in enumerate(profile) if line.startswith("     ") and line[5] != " "]
        assert continued and all(profile[n - 1].startswith("   ") for n in continued), width
