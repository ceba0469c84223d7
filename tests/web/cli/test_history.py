"""``recallops seed`` and ``recallops import`` as an operator runs them: real processes, real files."""

import json
import sqlite3
from pathlib import Path

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


def test_import_reports_rejections_and_exits_1(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    good = {
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
    path = tmp_path / "history.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({**good, "incident_id": "PM-78", "symptom": ""}) + "\n"
    )
    result = operator.cli("import", str(path), check=False)
    assert result.returncode == 1, result.stderr
    assert "imported 1, updated 0, unchanged 0, rejected 1" in result.stdout
    assert "line 2 (PM-78): symptom" in result.stdout
