"""``recallops seed`` and ``recallops import`` as an operator runs them: real processes, real files."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.server import LiveServer
from web.app.history import load_seeds


def test_seeding_twice_leaves_one_record_per_incident(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    seeds = load_seeds()
    first = operator.cli("seed")
    assert (
        f"imported {len(seeds.rows)}, updated 0, unchanged 0, rejected 0, runbooks {len(seeds.runbooks)}"
        in first.stdout
    )
    second = operator.cli("seed")
    assert f"imported 0, updated 0, unchanged {len(seeds.rows)}, rejected 0" in second.stdout
    with sqlite3.connect(tmp_path / "data" / "memory.db") as memory:
        kinds = dict(
            memory.execute("SELECT kind, count(DISTINCT document_id) FROM documents GROUP BY kind").fetchall()
        )
        total = memory.execute("SELECT count(*) FROM documents").fetchone()[0]
    assert kinds == {"incident": len(seeds.rows), "runbook": len(seeds.runbooks)}
    assert total == len(seeds.rows) + len(seeds.runbooks)
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        rows = store.execute(
            "SELECT origin, status, count(*) FROM incidents GROUP BY origin, status"
        ).fetchall()
    assert rows == [("seed", "resolved", len(seeds.rows))]


GOOD = {
    "incident_id": "PM-77",
    "service": "billing",
    "timestamp": "2023-05-01",
    "symptom": "Invoices not generated.",
    "error_signature": "InvoiceJobTimeout",
    "root_cause": "Cron host clock jumped.",
    "resolution_steps": "Re-ran the job.",
    "runbook_used": "",
    "outcome": "Invoices sent a day late.",
    "resolved_by": "ops",
}


def test_import_reports_rejections_and_exits_1(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    good = GOOD
    path = tmp_path / "history.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({**good, "incident_id": "PM-78", "symptom": ""}) + "\n"
    )
    result = operator.cli("import", str(path), check=False)
    assert result.returncode == 1, result.stderr
    assert "imported 1, updated 0, unchanged 0, rejected 1" in result.stdout
    assert "line 2 (PM-78): symptom" in result.stdout


def test_a_file_whose_every_line_is_rejected_says_nothing_was_imported_and_why(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    path = tmp_path / "history.jsonl"
    path.write_text("not json\n" + json.dumps({**GOOD, "symptom": ""}) + "\n")
    result = operator.cli("import", str(path), check=False)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(
        "nothing imported from history.jsonl: every line was rejected (2 lines)\n"
    )
    assert "  line 1: not valid JSON" in result.stdout and "  line 2 (PM-77): symptom" in result.stdout
    assert "0/0" not in result.stderr, result.stderr


def test_rewriting_an_imported_record_takes_replace(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(GOOD))
    operator.cli("import", str(path))
    path.write_text(json.dumps({**GOOD, "root_cause": "The invoice cron ran on a host without NTP."}))
    refused = operator.cli("import", str(path), check=False)
    assert refused.returncode == 1 and "line 1 (PM-77): PM-77 is already history" in refused.stdout
    replaced = operator.cli("import", "--replace", str(path))
    assert "imported 0, updated 1, unchanged 0, rejected 0" in replaced.stdout


def test_a_refused_rewrite_names_what_the_row_changes_by_the_rows_own_fields(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(GOOD))
    operator.cli("import", str(path))
    path.write_text(json.dumps({**GOOD, "timestamp": "2023-05-02", "root_cause": "NTP was off on the host."}))
    refused = operator.cli("import", str(path), check=False)
    assert (
        "  line 1 (PM-77): PM-77 is already history and this row changes root_cause, timestamp; "
        "import it with --replace (API: replace=true) to rewrite it\n"
    ) in refused.stdout


def test_lines_rejected_when_stored_are_counted_where_the_bar_ends_and_said_why(tmp_path: Path) -> None:
    """The parser takes PM-77's new version, storing it refuses it: the bar's last line says so, not
    only that it went through every line."""
    operator = LiveServer(data_dir=tmp_path / "data")
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(GOOD))
    operator.cli("import", str(path))
    changed = {**GOOD, "root_cause": "The invoice cron ran on a host without NTP."}
    fresh = {**GOOD, "incident_id": "PM-78"}
    path.write_text("\n".join([json.dumps(changed), json.dumps(fresh), "not json"]))

    result = operator.cli("import", str(path), check=False)

    assert result.returncode == 1
    [bar] = [line for line in result.stderr.splitlines() if "history.jsonl" in line]
    assert bar.startswith("history.jsonl: 1 stored, 2 rejected ") and " 3/3 " in bar, result.stderr
    assert "imported 1, updated 0, unchanged 0, rejected 2" in result.stdout
    assert "  line 1 (PM-77): PM-77 is already history" in result.stdout
    assert "  line 3: not valid JSON" in result.stdout

    path.write_text(json.dumps(changed))
    again = operator.cli("import", str(path), check=False)
    assert again.returncode == 1
    assert "history.jsonl: 0 stored, 1 rejected " in again.stderr
    assert again.stdout.startswith("nothing imported from history.jsonl: every line was rejected (1 line)\n")
    assert "  line 1 (PM-77): PM-77 is already history" in again.stdout


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_file_not_in_utf8_is_an_error_not_a_traceback(tmp_path: Path, encoding: str) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    path = tmp_path / "history.jsonl"
    path.write_text(
        json.dumps({**GOOD, "symptom": "Factures non générées."}, ensure_ascii=False), encoding=encoding
    )
    result = operator.cli("import", str(path), check=False)
    assert result.returncode == 1
    assert "history.jsonl: not UTF-8" in result.stderr and "Traceback" not in result.stderr


def test_a_folders_labeled_history_is_imported_beside_its_post_mortems(tmp_path: Path) -> None:
    """The folder a team exports holds both: its .jsonl is history as when named alone, not an
    "unsupported file type .jsonl" that the same message says is read."""
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "labeled.jsonl").write_text(json.dumps(GOOD) + "\n")
    (folder / "notes.md").write_text(
        "# Invoices late\n\n## Root cause\nThe cron host clock jumped.\n\n## Resolution\nRe-ran the job.\n"
    )
    result = LiveServer(data_dir=tmp_path / "data").cli("import", str(folder), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "imported 1, updated 0, unchanged 0, rejected 0" in result.stdout
    assert "files read 1, documents 1, new drafts 1" in result.stdout and "unreadable 0" in result.stdout
    assert "unsupported" not in result.stdout


def test_seeding_a_new_memory_over_a_seeded_database_says_memory_got_the_records(tmp_path: Path) -> None:
    """An operator who points the service at a new memory and seeds again must not read "unchanged" as
    "nothing was written": the incident store was unchanged, memory was given every record."""
    operator = LiveServer(data_dir=tmp_path / "data")
    seeds = load_seeds()
    assert f"new to memory {len(seeds.rows)}" in operator.cli("seed").stdout
    for path in (tmp_path / "data").glob("memory.db*"):
        path.unlink()
    again = operator.cli("seed")
    assert f"imported 0, updated 0, unchanged {len(seeds.rows)}, rejected 0" in again.stdout
    assert f"new to memory {len(seeds.rows)}" in again.stdout
    with sqlite3.connect(tmp_path / "data" / "memory.db") as memory:
        held = memory.execute("SELECT count(DISTINCT document_id) FROM documents WHERE kind = 'incident'")
        assert held.fetchone()[0] == len(seeds.rows)
    assert "new to memory 0" in operator.cli("seed").stdout
