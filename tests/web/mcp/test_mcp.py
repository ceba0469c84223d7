"""The MCP server driven by the official ``mcp`` client: over stdio (``recallops mcp``) and over
streamable HTTP at ``/mcp`` in a live server, on the demo history."""

import asyncio
import json
import math
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agent.core.confidence import FEATURES, shipped_fit
from agent.core.team_fit import TeamFit
from memory.factory import open_bank
from memory.settings import MemorySettings
from tests.support.fits import adopt
from tests.support.server import LiveServer
from web.app.container import Container
from web.app.settings import Settings
from web.cli.demo import DEMO_ALERT

pytestmark = pytest.mark.e2e

POOL_INCIDENT = "INC-2025-014"
TOOLS = {
    "recall_similar_incidents",
    "get_incident_briefing",
    "check_action",
    "get_incident",
    "list_open_incidents",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("mcp") / "data")
    live.cli("seed")
    live.start()
    yield live
    live.stop()


def token(server: LiveServer, name: str, *scopes: str) -> str:
    args = [arg for scope in scopes for arg in ("--scope", scope)]
    return server.cli("token", "create", "--name", name, *args).stdout.strip().splitlines()[-1]


def record_count(server: LiveServer) -> int:
    async def count() -> int:
        bank = open_bank(MemorySettings(data_dir=server.data_dir))
        try:
            health = await bank.health()
        finally:
            await bank.close()
        assert health.documents is not None
        return health.documents

    return asyncio.run(count())


@asynccontextmanager
async def over_stdio(server: LiveServer) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "web.cli", "mcp"], env=server.environ()
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def over_http(server: LiveServer, secret: str) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
    async with (
        client,
        streamable_http_client(f"{server.url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def exercise(session: ClientSession) -> dict[str, Any]:
    """List everything and call every tool once, as an agent exploring the server would."""
    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    assert names == TOOLS
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in listed.tools)
    recalled = await session.call_tool(
        "recall_similar_incidents",
        {"alert_description": DEMO_ALERT["description"], "service": DEMO_ALERT["service"]},
    )
    assert not recalled.is_error, recalled.content
    found = recalled.structured_content
    assert found is not None
    assert found["incidents"][0]["id"] == POOL_INCIDENT
    assert found["incidents"][0]["record"]["root_cause"]
    likely = [hit["confidence"]["probability"] for hit in found["incidents"]]
    assert likely == sorted(likely, reverse=True), "the likeliest precedent first"
    for blank in ("   ", "pool\x00timeout"):
        refused = await session.call_tool("get_incident_briefing", {"question": blank})
        assert refused.is_error, blank
    briefing = await session.call_tool("get_incident_briefing", {"question": DEMO_ALERT["description"]})
    assert not briefing.is_error and briefing.structured_content is not None
    assert POOL_INCIDENT in [r["id"] for r in briefing.structured_content["related_incidents"]]
    fixes = [*briefing.structured_content["suggested_fix"], *briefing.structured_content["head"]["fixes"]]
    assert fixes and all(f["role"] == "fix" and f["field"] for f in fixes)  # role and field as values
    guard = await session.call_tool(
        "check_action", {"action": "scale checkout-service to 18 pods", "service": DEMO_ALERT["service"]}
    )
    assert not guard.is_error and guard.structured_content is not None
    assert guard.structured_content["verdict"] == "risky"
    assert POOL_INCIDENT in guard.structured_content["citations"]
    opened = await session.call_tool("list_open_incidents", {})
    assert not opened.is_error
    missing = await session.call_tool("get_incident", {"id": "INC-9999"})
    assert missing.is_error and "no incident" in json.dumps([c.model_dump() for c in missing.content])
    past = await session.call_tool("get_incident", {"id": POOL_INCIDENT})
    assert not past.is_error and past.structured_content is not None
    assert past.structured_content["status"] == "resolved"
    assert past.structured_content["delivery"] == []  # seeded history owes no channel anything
    resources = await session.list_resources()
    assert [str(r.uri) for r in resources.resources] == ["recallops://profile"]
    read = await session.read_resource("recallops://profile")
    profile = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert profile["name"] == "Team-wide Production Reliability Profile"
    return found


async def test_stdio_answers_a_real_client_and_writes_no_memory(server: LiveServer) -> None:
    before = await asyncio.to_thread(record_count, server)
    async with over_stdio(server) as session:
        await exercise(session)
    assert await asyncio.to_thread(record_count, server) == before


async def test_http_answers_with_a_read_token_and_writes_no_memory(server: LiveServer) -> None:
    secret = await asyncio.to_thread(token, server, "mcp-reader", "read")
    before = await asyncio.to_thread(record_count, server)
    async with over_http(server, secret) as session:
        await exercise(session)
    assert await asyncio.to_thread(record_count, server) == before


async def test_http_refuses_no_token_a_wrong_token_and_the_wrong_scope(server: LiveServer) -> None:
    sender = await asyncio.to_thread(token, server, "mcp-sender", "alerts:write")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        anonymous = await client.post("/mcp", json=hello, headers=headers)
        assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Bearer")
        wrong = await client.post(
            "/mcp", json=hello, headers={**headers, "Authorization": "Bearer rops_nope"}
        )
        assert wrong.status_code == 401
        scoped = await client.post(
            "/mcp", json=hello, headers={**headers, "Authorization": f"Bearer {sender}"}
        )
        assert scoped.status_code == 403 and "read" in scoped.json()["detail"]
    with pytest.raises(ExceptionGroup) as refused:  # the official client gives up on the 403 too
        async with over_http(server, sender):
            pass
    assert refused.group_contains(MCPError, depth=None)


async def test_http_holds_no_get_stream_open(server: LiveServer) -> None:
    secret = await asyncio.to_thread(token, server, "mcp-streamer", "read")
    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {secret}"}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        for _ in range(3):
            async with client.stream("GET", "/mcp", headers=headers) as response:
                assert response.status_code == 405
                assert "text/event-stream" not in response.headers.get("content-type", "")
                assert "POST" in response.headers["allow"]


async def test_recalled_precedents_carry_the_probability_of_the_teams_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent reads a precedent's probability from the fit the team's briefings use, its adopted refit
    once there is one, not from the shipped fit."""
    live = LiveServer(tmp_path / "data")
    live.cli("seed")

    async def pool_probability() -> float:
        async with over_stdio(live) as session:
            recalled = await session.call_tool(
                "recall_similar_incidents",
                {"alert_description": DEMO_ALERT["description"], "service": DEMO_ALERT["service"]},
            )
        assert recalled.structured_content is not None
        pool = next(i for i in recalled.structured_content["incidents"] if i["id"] == POOL_INCIDENT)
        return float(pool["confidence"]["probability"])

    shipped = await pool_probability()
    # A refit saying this team's precedents are relevant far less often than the shipped fit says.
    lowered = TeamFit(shipped_fit(), -3.0, 1.0, (0.0,) * len(FEATURES), labels=40)
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(live.data_dir))
    container = Container.build(Settings())
    try:
        adopt(container, lowered.as_dict())
    finally:
        await container.aclose()

    expected = 1 / (1 + math.exp(3.0 - math.log(shipped / (1 - shipped))))
    assert await pool_probability() == pytest.approx(expected, abs=0.002)
    live.cli("confidence", "rollback")
    assert await pool_probability() == shipped
