"""Replay: the incident briefed with memory off and on, side by side, with what memory changed marked.

Nothing is stored; it answers "what did remembering buy us here?" for one incident.
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from agent.briefing.replay import replay
from incidents.incident.models import Incident
from web.app import briefings as wiring
from web.app.agent import open_agent
from web.app.container import Container
from web.http.deps import get_container
from web.http.routes.pages.common import PageError, load_incident, page_user, render
from web.http.security import Principal
from web.http.views.briefing import SECTIONS
from web.http.views.replay import changes, replay_sides

router = APIRouter(include_in_schema=False)


def _incident(container: Container, public_id: str) -> Incident:
    with container.sessions() as db:
        return load_incident(db, public_id)


@router.get("/incidents/{public_id}/replay", response_class=HTMLResponse)
async def replay_page(
    request: Request,
    public_id: str,
    principal: Principal = Depends(page_user),
    container: Container = Depends(get_container),
) -> HTMLResponse:
    incident = await run_in_threadpool(_incident, container, public_id)
    alert = await run_in_threadpool(wiring.load_alert, container, incident.id)
    if alert is None:
        raise PageError(404, "No such incident", f"There is no incident {public_id}.")
    async with open_agent(container) as agent:
        result = await replay(agent, alert)
    off, on = replay_sides(result, incident.public_id)
    added, replaced = changes(result)
    context = {
        "nav": "incidents",
        "incident": incident,
        "off": off,
        "on": on,
        "diff": result.diff,
        "memory_error": result.memory_on.memory_error,
        "added": added,
        "replaced": replaced,
        "sections": SECTIONS,
    }
    return await run_in_threadpool(render, request, "replay.html", context, principal=principal)
