"""Briefings on a live server: a job survives a restart, the LLM path runs over HTTP, the CLI speaks JSON."""

import asyncio
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory.factory import open_bank
from memory.service import log_incident
from memory.settings import MemorySettings
from tests.support.net import wait_for
from tests.support.records import POOL, POOL_INCIDENT
from tests.support.scripted_llm import Reply, ScriptedLLM, answer, tool_call
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e


def seed_memory(data_dir: Path) -> None:
    async def write() -> None:
        bank = open_bank(MemorySettings(data_dir=data_dir))
        try:
            await log_incident(bank, POOL_INCIDENT, severity="critical")
        finally:
            await bank.close()

    asyncio.run(write())


def token(server: LiveServer) -> str:
    done = server.cli(
        "token",
        "create",
        "--name",
        "oncall",
        "--scope",
        "alerts:write",
        "--scope",
        "incidents:write",
        "--scope",
        "read",
    )
    return done.stdout.strip().splitlines()[-1]


def client(server: LiveServer, secret: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {secret}"}, timeout=60)


def fire(http: httpx.Client) -> str:
    response = http.post(
        "/api/v1/alerts",
        json={
            "title": "Checkout database connections exhausted",
            "service": "checkout-service",
            "severity": "critical",
            "description": f"checkout-api: {POOL}",
        },
    )
    assert response.status_code in (200, 202), response.text
    [incident] = response.json()["incidents"]
    return incident["id"] if isinstance(incident, dict) else incident


def job_states(data_dir: Path) -> list[str]:
    with sqlite3.connect(data_dir / "recallops.db") as conn:
        return [row[0] for row in conn.execute("SELECT state FROM jobs WHERE kind = 'briefing' ORDER BY id")]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    seed_memory(path)
    return path


def test_a_briefing_job_survives_a_restart(data_dir: Path) -> None:
    server = LiveServer(data_dir, env={"RECALLOPS_RUN_WORKER": "false"}).start()
    try:
        secret = token(server)
        with client(server, secret) as http:
            incident = fire(http)
            pending = http.get(f"/api/v1/incidents/{incident}/briefing")
            assert pending.status_code == 404 and "pending" in pending.json()["detail"]
    finally:
        server.stop()
    assert job_states(data_dir) == ["pending"]

    server = LiveServer(data_dir).start()
    try:
        with client(server, secret) as http:
            stored = wait_for(
                lambda: (
                    (r := http.get(f"/api/v1/incidents/{incident}/briefing")).status_code == 200 and r.json()
                ),
                timeout=60,
                what="the briefing stored after restart",
            )
        briefing = stored["briefing"]
        assert briefing["mode"] == "evidence-only" and briefing["seen_before"] == "recurring"
        assert briefing["related_incidents"][0]["id"] == "PM-0042"
        assert job_states(data_dir) == ["done"]

        asked = server.cli("ask", f"orders-db: {POOL}", "--service", "orders-service", "--json")
        as_json = json.loads(asked.stdout)
        assert asked.stdout.count("\n") == 1 and as_json["related_incidents"][0]["id"] == "PM-0042"
        replayed = server.cli("replay", incident)
        assert "What memory changed:" in replayed.stdout and "+ related incidents: PM-0042" in replayed.stdout
    finally:
        server.stop()


def scripted_model(body: dict[str, Any]) -> Reply:
    """Recall on the first turn, then answer citing whatever incident the tool returned."""
    if not body["messages"][0]["content"].startswith("You are RecallOps"):
        return answer("{}")  # other users of the model (the profile refresher) get an empty profile
    tool_results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if body.get("tools") and not tool_results:
        return tool_call(
            "recall_similar_incidents", {"alert_description": POOL, "service": "checkout-service", "limit": 3}
        )
    found = re.search(r"\[(\d+)\] incident: (\S+) on", "\n".join(tool_results))
    n, ident = (found.group(1), found.group(2)) if found else ("1", None)
    return answer(
        {
            "summary": f"Seen before as {ident} [{n}].",
            "likely_causes": [{"text": f"Connection pool too small for the burst [{n}]"}],
            "risky_actions": [{"text": f"Adding replicas without checking max_connections [{n}]"}],
            "related_incidents": [ident] if ident else [],
            "seen_before": "recurring" if ident else "novel",
        }
    )


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM(fallback=scripted_model).start()
    yield server
    server.stop()


def test_new_incidents_are_briefed_by_the_llm_over_http(data_dir: Path, llm: ScriptedLLM) -> None:
    env = {"GROQ_API_KEY": "test-key", "GROQ_BASE_URL": llm.url, "RECALLOPS_LLM_MAX_RETRIES": "0"}
    server = LiveServer(data_dir, env=env).start()
    try:
        with client(server, token(server)) as http:
            incident = fire(http)
            stored = wait_for(
                lambda: (
                    (r := http.get(f"/api/v1/incidents/{incident}/briefing")).status_code == 200 and r.json()
                ),
                timeout=60,
                what="the LLM briefing",
            )
        briefing = stored["briefing"]
        assert briefing["mode"] == "llm", briefing["warnings"]
        assert briefing["related_incidents"][0]["id"] == "PM-0042"
        cited = next(e["n"] for e in briefing["evidence"] if e["id"] == "PM-0042")
        assert briefing["likely_causes"][0]["citations"] == [cited]
        assert [h["n"] for h in briefing["hops"]] == [1, 2]
        assert briefing["hops"][1]["usage"]["total_tokens"] == 120
        briefing_calls = [
            r for r in llm.requests if r["messages"][0]["content"].startswith("You are RecallOps")
        ]
        assert len(briefing_calls) == 2
        asked = server.cli("ask", POOL, "--service", "checkout-service", "--json")
        assert json.loads(asked.stdout)["mode"] == "llm"
    finally:
        server.stop()
