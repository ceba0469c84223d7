"""``recallops bench ingest`` end to end at a tiny size: the JSON it prints, not how fast it was."""

import json
from pathlib import Path

import httpx
import pytest

from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e


def test_bench_ingest_json(tmp_path: Path) -> None:
    server = LiveServer(tmp_path / "server").start()
    try:
        token = server.cli("token", "create", "--name", "bench", "--scope", "alerts:write").stdout.strip()
        runs = [
            ["--alerts", "40", "--concurrency", "4"],
            ["--alerts", "30", "--concurrency", "2", "--rate", "200", "--per-payload", "3"],
        ]
        for extra in runs:
            out = server.cli(
                "bench", "ingest", "--url", server.url, "--token", token, "--json", *extra
            ).stdout
            result = json.loads(out)
            for key in ("alerts_per_s", "p50_ms", "p95_ms", "p99_ms", "floor_rps"):
                assert result[key] > 0, key
            assert result["errors"] == 0
            assert result["p50_ms"] <= result["p95_ms"] <= result["p99_ms"]
        reader = server.cli("token", "create", "--name", "reader", "--scope", "read").stdout.strip()
        listed = httpx.get(
            f"{server.url}/api/v1/incidents?limit=1",
            headers={"Authorization": f"Bearer {reader}"},
            timeout=10,
        ).json()
        assert listed["total"] == 20  # one incident per benchmark group, every alert joined it
    finally:
        server.stop()
