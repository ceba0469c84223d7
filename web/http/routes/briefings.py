"""Briefings over HTTP: read the latest, re-run one, ask about an alert ad hoc, replay with memory off/on.

Only the re-run stores anything (a new version on the incident). ``ask`` and ``replay`` answer and
forget: they are for trying RecallOps on an alert, or seeing what memory changed for an incident.
"""

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, status
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from agent.briefing.replay import Replay, replay
from agent.core.evidence import AlertInput
from agent.core.schema import Briefing
from incidents.briefings import service as briefings
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from web.app import briefings as wiring
from web.app.agent import alert_for_incident, open_agent
from web.app.container import Container
from web.http.auth import require
from web.http.body import StorableText
from web.http.deps import get_container
from web.http.routes.common import PublicId, errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1", tags=["briefings"])

MemorySwitch = Literal["on", "off"]
ERRORS = errors(None, {404: "no such incident, or no briefing yet"})


class StoredBriefingRead(BaseModel):
    incident: str
    version: int
    created_at: datetime
    briefing: Briefing


class BriefingVersionRead(BaseModel):
    version: int
    created_at: datetime
    mode: str
    memory: str


class AskRequest(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    text: StorableText = Field(min_length=1, max_length=20_000, description="The alert text, as it fired")
    service: StorableText | None = Field(
        default=None, max_length=255, description="Scope recall to this service first"
    )
    title: StorableText = Field(default="", max_length=500)
    memory: MemorySwitch = "on"


def _incident(container: Container, public_id: str) -> Incident:
    with container.sessions() as db:
        incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
    if incident is None:
        raise HTTPException(404, f"no incident {public_id!r}")
    return incident


def _incident_alert(container: Container, public_id: str) -> tuple[Incident, AlertInput]:
    """The incident (404 if unknown) and what the agent is told about it."""
    with container.sessions() as db:
        incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
        if incident is None:
            raise HTTPException(404, f"no incident {public_id!r}")
        return incident, alert_for_incident(db_session=db, incident=incident)


def _stored(container: Container, incident: Incident, version: int | None) -> StoredBriefingRead:
    with container.sessions() as db:
        if version is None:
            row = briefings.latest_briefing(db_session=db, incident_id=incident.id)
        else:
            row = briefings.get_briefing(db_session=db, incident_id=incident.id, version=version)
        job = briefings.latest_job(db_session=db, incident_id=incident.id) if row is None else None
    if row is None:
        if version is not None:
            raise HTTPException(404, f"{incident.public_id} has no briefing version {version}")
        state = f"its briefing job is {job.state}" if job else "no briefing was requested"
        if job is not None and job.last_error:
            state += f" (last error: {job.last_error[:200]})"
        raise HTTPException(404, f"{incident.public_id} has no briefing yet: {state}")
    return StoredBriefingRead(
        incident=incident.public_id,
        version=row.version,
        created_at=row.created_at,
        briefing=Briefing.model_validate(row.data),
    )


@router.get("/incidents/{public_id}/briefing", response_model=StoredBriefingRead, responses=ERRORS)
async def get_briefing(
    public_id: PublicId,
    version: Annotated[
        int | None, Query(ge=1, le=2**31 - 1, description="A past version; the latest by default")
    ] = None,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> StoredBriefingRead:
    """The incident's latest briefing (or a given version)."""
    incident = await run_in_threadpool(_incident, container, public_id)
    return await run_in_threadpool(_stored, container, incident, version)


@router.get("/incidents/{public_id}/briefings", response_model=list[BriefingVersionRead], responses=ERRORS)
async def list_briefings(
    public_id: PublicId,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> list[BriefingVersionRead]:
    """Every stored version, newest first."""
    incident = await run_in_threadpool(_incident, container, public_id)

    def versions() -> list[BriefingVersionRead]:
        with container.sessions() as db:
            rows = briefings.briefing_versions(db_session=db, incident_id=incident.id)
            return [
                BriefingVersionRead(version=r.version, created_at=r.created_at, mode=r.mode, memory=r.memory)
                for r in rows
            ]

    return await run_in_threadpool(versions)


@router.post(
    "/incidents/{public_id}/briefing",
    response_model=StoredBriefingRead,
    status_code=status.HTTP_201_CREATED,
    responses=ERRORS,
)
async def rerun_briefing(
    public_id: PublicId,
    memory: Annotated[MemorySwitch, Query(description="off: brief without recalling anything")] = "on",
    _: Principal = Depends(require("incidents:write")),
    container: Container = Depends(get_container),
) -> StoredBriefingRead:
    """Brief the incident again now and store the result as its next version."""
    incident, alert = await run_in_threadpool(_incident_alert, container, public_id)
    async with open_agent(container) as agent:
        briefing = await agent.brief(alert, memory_on=memory == "on")
    row = await run_in_threadpool(lambda: wiring.store(container, incident_id=incident.id, briefing=briefing))
    return StoredBriefingRead(
        incident=incident.public_id, version=row.version, created_at=row.created_at, briefing=briefing
    )


@router.post("/ask", response_model=Briefing, responses=ERRORS)
async def ask(
    body: AskRequest,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> Briefing:
    """Alert text in, briefing out; nothing is stored."""
    alert = AlertInput(text=body.text, service=body.service or None, title=body.title)
    async with open_agent(container) as agent:
        return await agent.brief(alert, memory_on=body.memory == "on")


@router.post("/incidents/{public_id}/replay", response_model=Replay, responses=ERRORS)
async def replay_incident(
    public_id: PublicId,
    _: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> Replay:
    """The incident briefed with memory off and on, and what memory changed; nothing is stored."""
    _incident, alert = await run_in_threadpool(_incident_alert, container, public_id)
    async with open_agent(container) as agent:
        return await replay(agent, alert)
