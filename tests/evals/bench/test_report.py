"""The one benchmark report: the machine described, every step present, a failed step shown as failed."""

import asyncio
import json
from pathlib import Path

from evals.bench.ingest import run_ingest
from evals.bench.report import STEPS, Sizes, _ingest, _size, live_server, machine, markdown, write


def _report() -> dict[str, object]:
    scores = {"recall@1": 0.5, "recall@3": 0.6, "recall@5": 0.7, "recall@10": 0.8}
    scores |= {"mrr@10": 0.55, "ndcg@10": 0.5, "empty@10": 0.1, "queries": 58}
    return {
        "generated_at": "2026-01-01T00:00:00Z",
        "machine": machine(),
        "sizes": {"ingest_alerts": 10},
        "benchmarks": {
            "startup": {
                "runs": 3,
                "floor_p50_s": 0.03,
                "commands": {"help": {"p50_s": 0.15, "p95_s": 0.2, "ratio_to_floor": 5.0}},
            },
            "history": {"records": 500, "records_per_s": 90.0, "embed_floor_records_per_s": 100.0},
            "ingest": {"alerts_per_s": 400.0, "p50_ms": 5.0, "floor_rps": 900.0},
            "recall": [{"size": 1000, "recall_p50_ms": 3.2}],
            "pages": {"incidents": 10, "runs": 2, "floor_p50_ms": 1.0, "pages": {"list": {"p50_ms": 9.0}}},
            "retrieval": {"hybrid": {"scoped": scores, "unscoped": scores}},
            "evals": {
                "mode": "evidence-only",
                "passed": 1,
                "failed": 1,
                "total": 2,
                "faithfulness": {"rates": {"cited": 1.0, "in_range": 1.0, "supported": 0.9, "canary": None}},
                "memory_replay": {"scenarios": 2, "changed": ["a"]},
                "scenarios": [{"id": "b", "passed": False, "failures": ["x missing"], "error": None}],
            },
        },
        "errors": {"briefing": "RuntimeError: boom"},
        "seconds": {name: 1.0 for name in STEPS},
    }


def test_machine_is_described() -> None:
    described = machine()
    assert described["cpu_count"] and described["python"] and described["sqlite"]
    assert {"cpu_model", "ram_gb", "embedding_model", "llm"} <= set(described)


def test_markdown_has_every_step_and_names_failures(tmp_path: Path) -> None:
    json_path, md_path = write(_report(), tmp_path / "out")
    text = md_path.read_text()
    for name in STEPS:
        assert f"## {name}" in text
    assert "**Failed:** RuntimeError: boom" in text
    assert "| help | 0.15 | 0.2 | 5.0 |" in text and "| 500 | 90 | 100 |" in text
    assert "| hybrid | scoped | 0.500 |" in text
    assert "Passed 1, failed 1, known gaps 0, total 2" in text and "- FAIL b: x missing" in text
    assert "in 1 of 2 scenarios: a" in text
    assert json.loads(json_path.read_text())["errors"] == {"briefing": "RuntimeError: boom"}
    assert markdown(_report()) == text


def test_live_server_accepts_the_benchmark_token(tmp_path: Path) -> None:
    with live_server(tmp_path) as (url, token):
        result = asyncio.run(run_ingest(url, token, alerts=20, concurrency=2))
    assert result.errors == 0
    assert result.alerts == 20


def test_default_sizes_are_small() -> None:
    sizes = Sizes()
    assert max(sizes.recall_sizes) <= 10_000
    assert sizes.briefing_incidents <= 10_000


def test_ingest_runs_on_sqlite_and_on_the_database_given(postgres_url: str) -> None:
    sizes = Sizes(ingest_alerts=20, ingest_concurrency=2, ingest_database_url=postgres_url)
    rows = asyncio.run(_ingest(sizes))
    assert [row["database"] for row in rows] == ["sqlite", "postgresql"]
    assert all(row["errors"] == 0 and row["alerts"] == 20 and row["floor_rps"] > 0 for row in rows)


def test_a_database_password_stays_out_of_the_report() -> None:
    shown = _size("postgresql://bench:s3cret@127.0.0.1:5432/recallops")
    assert "s3cret" not in shown and shown.startswith("postgresql://bench:")
    assert _size(Path("a/b")) == "a/b" and _size(16) == 16
