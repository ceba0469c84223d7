"""A replay against an earlier run: each system's change, incident by incident, over the stream and each
half, and a saved run that cannot be compared refused before a replay starts."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evals.bench.protocol import BaselineError
from evals.bench.replay import Scored
from evals.bench.replay_baseline import compare, load_rows, markdown, rows_of
from web.cli import app


def _rows(top1: str) -> list[Scored]:
    """Eight incidents, each with an earlier relevant one; ``top1`` says which found it first ("1")."""
    return [
        Scored(f"i{n}", True, found == "1", found == "1", 100 if found == "1" else 0, found != "1")
        for n, found in enumerate(top1)
    ]


def test_a_change_is_read_incident_by_incident_over_the_stream_and_each_half() -> None:
    before = {"learning": _rows("10101010"), "frozen": _rows("11110000")}
    now = {"learning": _rows("10101011"), "frozen": _rows("01110000"), "bm25": _rows("00000000")}
    got = compare(now, before)
    assert got["incidents"] == 8
    assert got["first_precedent"] == {
        "learning": {"gained": ["i7"], "lost": []},
        "frozen": {"gained": [], "lost": ["i0"]},
    }  # bm25 is not in the earlier run: nothing to compare it with
    by = {(r["system"], r["span"], r["metric"]): r for r in got["intervals"]}
    assert by[("learning", "stream", "recall@1")]["diff"] == 0.125
    assert by[("learning", "first half", "recall@1")]["diff"] == 0.0
    assert by[("learning", "second half", "recall@1")]["diff"] == 0.25
    assert by[("frozen", "first half", "mean_grade")]["diff"] == -25.0
    assert got["worse_on_a_half"] == {
        "learning": [],
        "frozen": [
            "mean_grade on the first half",
            "recall@1 on the first half",
            "recall@5 on the first half",
        ],
    }
    text = markdown(got, "before.json")
    assert "| learning | second half | +0.250 [" in text
    assert "- learning: first precedent gained i7, lost nowhere; no figure worse on either half" in text
    assert (
        "- frozen: first precedent gained nowhere, lost i0; worse on a half: mean_grade on the first" in text
    )


def test_a_baseline_of_another_stream_is_no_comparison() -> None:
    with pytest.raises(BaselineError, match="none of these incidents"):
        compare({"learning": _rows("1")}, {"learning": [Scored("other", True, True, True, 100, False)]})


def test_a_report_is_read_back_as_the_rows_it_saved() -> None:
    rows = _rows("101")
    report = {"rows": {"learning": [r.as_row() for r in rows]}}
    assert rows_of(json.loads(json.dumps(report))) == {"learning": [r for r in rows]}


def test_a_file_that_cannot_be_compared_is_named_and_refused(tmp_path: Path) -> None:
    cases = {
        "not json {": "is not readable JSON",
        json.dumps({"systems": {"learning": {}}}): "holds no per-incident rows",
        json.dumps(
            {"rows": {"learning": [{"incident": "a", "top1": True}]}}
        ): "a row is not a replayed incident",
    }
    for n, (content, message) in enumerate(cases.items()):
        path = tmp_path / f"run{n}.json"
        path.write_text(content)
        with pytest.raises(BaselineError, match=message):
            load_rows(path)
        # The command refuses it as the option's fault, before any replay starts.
        result = CliRunner().invoke(app, ["bench", "replay", "--scenarios", "--baseline", str(path)])
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.output.split()) and path.name in result.output
        assert "incidents replayed" not in result.output and "Traceback" not in result.output
