"""``recallops bench import-health``: its bodies are what they say, and its JSON at a tiny size."""

import json
from pathlib import Path

import pytest

from evals.bench.import_health import junk_body, records_body
from memory.history import parse_body
from tests.support.server import LiveServer


def test_a_junk_body_is_all_rejected_and_a_records_body_all_accepted() -> None:
    rows, rejections = parse_body(junk_body(2_000))
    assert rows == [] and rejections.count == 1_000
    body = records_body(20_000)
    rows, rejections = parse_body(body)
    assert rejections.count == 0 and len(rows) == body.count(b"\n") and len(body) >= 20_000
    assert {row.incident_id for _, row in parse_body(records_body(2_000))[0]}.isdisjoint(
        row.incident_id for _, row in rows
    )  # fresh ids each time: every run imports, none finds its records already there


@pytest.mark.e2e
def test_bench_import_health_json(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "server").start()
    try:
        token = server.cli("token", "create", "--name", "bench", "--scope", "incidents:write").stdout.strip()
        out = server.cli(
            *("bench", "import-health", "--url", server.url, "--token", token),
            *("--mib", "0.05", "--runs", "2", "--json"),
        ).stdout
    finally:
        server.stop()
    result = json.loads(out)
    assert result["lines"] == 26_214 and len(result["runs"]) == 2
    for run in result["runs"]:
        assert run["status"] == 200 and run["probes"] >= 1
        assert 0 < run["baseline_p50_ms"] <= run["baseline_p99_ms"]
        assert 0 < run["during_p50_ms"] <= run["during_p99_ms"] <= run["during_max_ms"]
    assert set(result["median"]) == {
        "import_s",
        "baseline_p50_ms",
        "baseline_p99_ms",
        "during_p50_ms",
        "during_p99_ms",
    }
