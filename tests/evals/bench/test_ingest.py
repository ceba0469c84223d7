"""``recallops bench ingest`` end to end at a tiny size: the JSON it prints, not how fast it was."""

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from evals.bench.ingest import IngestBench, _cpu_summary, server_cpu_s
from tests.support.server import LiveServer

RESULT = IngestBench(
    alerts=10,
    per_payload=1,
    concurrency=2,
    rate=None,
    errors=0,
    seconds=1.0,
    alerts_per_s=10.0,
    p50_ms=1.0,
    p95_ms=2.0,
    p99_ms=3.0,
    floor_rps=20.0,
)


@pytest.mark.e2e
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
            for key in (
                "alerts_per_s",
                "p50_ms",
                "p95_ms",
                "p99_ms",
                "floor_rps",
                "cpu_ms_per_alert",
                "floor_cpu_ms",
            ):
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


def test_server_cpu_is_read_from_metrics_or_left_out() -> None:
    metrics = "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=metrics) if request.url.path == "/metrics" else httpx.Response(401)

    async def read(text: str) -> float | None:
        nonlocal metrics
        metrics = text
        async with httpx.AsyncClient(
            transport=httpx.MockTransport(answer), base_url="http://bench"
        ) as client:
            return await server_cpu_s(client)

    assert asyncio.run(read(metrics)) == 12.5
    assert asyncio.run(read("# TYPE other_total counter\nother_total 1\n")) is None
    assert _cpu_summary(replace(RESULT, cpu_ms_per_alert=3.0, floor_cpu_ms=1.5)).endswith("2.0× a /healthz)")
    assert _cpu_summary(RESULT) == ""
