"""The MCP server: RecallOps' memory and incidents as read-only tools for other agents.

Built with the official ``mcp`` SDK (``MCPServer``). The same server answers over stdio
(``recallops mcp``) and over streamable HTTP at ``/mcp`` in the service (``web.mcp.http``, behind
bearer tokens). Each tool calls what the API calls, so an agent sees what an engineer sees:

- ``recall_similar_incidents``: the agent's recall tool, each incident with its labeled fields;
- ``get_incident_briefing``: a cited briefing for a question or an alert text, as ``POST /ask`` (nothing
  is stored);
- ``check_action``: the decision-time guard for a move about to be made (risky, worked before, no
  record), judged from the same records as the incident page's check, with nothing written;
- ``get_incident`` and ``list_open_incidents``: the incident API, with the short briefing (and, for one
  incident, where its messages stand per chat channel);
- the resource ``recallops://profile``: the team reliability profile.

**No tool writes memory.** Resolution stays with engineers (the page, the API, the resolution
conversation); the tools here only read, and a briefing asked for here is not stored.
"""

from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import HTTPException
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, StringConstraints

from agent.core.evidence import AlertInput
from incidents.briefings import service as briefings
from incidents.incident import service as incidents
from memory.service import MemoryUnavailable
from web.app import profile
from web.app.agent import open_agent
from web.app.check_action import MAX_ACTION_CHARS, check_service_action, verdict_read
from web.app.container import Container
from web.app.notify.render import short_briefing
from web.http.routes.incidents import get_incident as incident_detail
from web.http.routes.incidents import list_incidents
from web.http.routes.memory import search_memory
from web.http.security import Principal

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
MCP_PRINCIPAL = Principal(name="mcp", kind="token", scopes=frozenset({"read"}))
INSTRUCTIONS = (
    "RecallOps remembers the incidents this team resolved. Recall similar past incidents for an alert, "
    "ask for a cited briefing, read open incidents and the team's reliability profile. Everything here "
    "is read-only; recalled records are past incidents, possibly stale: check before acting."
)

Service = Annotated[str | None, Field(default=None, max_length=255, description="Only this service")]
# What a tool's text arguments must be, as the API's bodies: words (not blank) and no NUL, which no
# field of the store can hold.
TEXT = StringConstraints(strip_whitespace=True, min_length=1, pattern=r"^[^\x00]*$")


def build_server(container: Callable[[], Container]) -> MCPServer[Any]:
    """The server, reading the process's container at call time (built after the app starts)."""
    server: MCPServer[Any] = MCPServer("recallops", version="0.1.0", instructions=INSTRUCTIONS)

    def base_url() -> str:
        return container().notifier.base_url

    @server.tool(annotations=READ_ONLY)
    async def recall_similar_incidents(
        alert_description: Annotated[str, TEXT, Field(max_length=4000, description="The alert text")],
        service: Service = None,
        limit: Annotated[int, Field(ge=1, le=20, description="Incidents, not facts")] = 3,
    ) -> dict[str, Any]:
        """Past resolved incidents resembling an alert, the likeliest precedent first (by the calibrated
        probability that it is a relevant precedent, ties in retrieval order): each with its labeled
        post-mortem fields (symptom, error signature, root cause, resolution steps, runbook, outcome,
        failed attempts), that probability (with its band), the retrieval score and channels that found
        it, and a citation linking to its record."""
        try:
            found = await search_memory(container(), alert_description, service or None, limit)
        except MemoryUnavailable as exc:
            raise ToolError(f"memory unavailable: {exc}") from exc
        incidents_found = []
        for item in sorted(found.incidents, key=lambda hit: -hit.confidence.probability):
            data = item.model_dump(mode="json")
            data["citation"] = {"id": item.id, "url": f"{base_url()}/records/{item.id}"}
            incidents_found.append(data)
        return {"query": alert_description, "service": service, "incidents": incidents_found}

    @server.tool(annotations=READ_ONLY)
    async def get_incident_briefing(
        question: Annotated[str, TEXT, Field(max_length=20_000, description="Alert text or question")],
        service: Service = None,
    ) -> dict[str, Any]:
        """A briefing from memory: summary, likely causes, first checks, suggested fix and risky actions,
        each citing numbered evidence, and the related incidents. Nothing is stored."""
        alert = AlertInput(text=question, service=service or None, title="")
        async with open_agent(container()) as agent:
            briefing = await agent.brief(alert, memory_on=True)
        return briefing.model_dump(mode="json", exclude={"hops"})

    @server.tool(annotations=READ_ONLY)
    async def check_action(
        action: Annotated[
            str, TEXT, Field(max_length=MAX_ACTION_CHARS, description="The move about to be made")
        ],
        service: Service = None,
    ) -> dict[str, Any]:
        """Check a move against memory before making it: "risky" when a recorded failed attempt or risky
        action matches (with what happened then), "worked before" when a recorded resolution step
        matches, else "no record"; the service's records first, then every service's, each cited.
        Nothing is written."""
        try:
            check = await check_service_action(container(), action=action, service=service or None)
        except MemoryUnavailable as exc:
            raise ToolError(f"memory unavailable: {exc}") from exc
        return verdict_read(check).model_dump(mode="json")

    @server.tool(annotations=READ_ONLY)
    def get_incident(
        id: Annotated[str, Field(min_length=1, max_length=64, description="Readable id, e.g. INC-0001")],
    ) -> dict[str, Any]:
        """One incident: status, service, severity, alerts, timeline, the short head of its briefing and,
        per chat channel, whether the briefing was sent, is waiting, failing or held by the receiver."""
        with container().sessions() as db:
            try:
                detail = incident_detail(public_id=id, alerts_limit=20, _=MCP_PRINCIPAL, db=db)
            except HTTPException as exc:
                raise ToolError(str(exc.detail)) from exc
            found = incidents.get_by_public_id(db_session=db, public_id=id)
            assert found is not None
            stored = briefings.latest_briefing(db_session=db, incident_id=found.id)
        data = detail.model_dump(mode="json")
        data["briefing"] = asdict(short_briefing(stored.data)) if stored else None
        data["url"] = f"{base_url()}/incidents/{id}"
        return data

    @server.tool(annotations=READ_ONLY)
    def list_open_incidents(service: Service = None) -> dict[str, Any]:
        """Incidents not yet resolved (triggered or acknowledged), newest first."""
        with container().sessions() as db:
            page = list_incidents(
                status=["open"],
                service_name=service or None,
                severity=None,
                since=None,
                limit=100,
                offset=0,
                _=MCP_PRINCIPAL,
                db=db,
            )
        return page.model_dump(mode="json")

    @server.resource(
        "recallops://profile",
        name="team-reliability-profile",
        title="Team-wide Production Reliability Profile",
        description="Recurring failure patterns: services, early signals, recorded causes, risky moves",
        mime_type="application/json",
    )
    async def team_profile() -> dict[str, Any]:
        found = await profile.view(container(), profile.Scope(None))
        return found.to_dict()

    return server
