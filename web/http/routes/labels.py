"""Relevance labels over HTTP: what a resolved incident says about each precedent its briefings showed.

``GET`` lists every precedent shown with its label (inferred from the post-mortem, or an engineer's
mark); ``PUT`` gives or corrects marks, one per precedent ("same_failure", "related", "not_related").
"""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from agent.resolution.labels import Mark
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.labels import service as labels
from web.app import relevance
from web.app.container import Container
from web.http.auth import require
from web.http.deps import get_container, get_db
from web.http.routes.common import NO_INCIDENT, PublicId, errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/incidents", tags=["labels"])

PrecedentId = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class LabelRead(BaseModel):
    precedent: str
    probability: float | None
    mark: str | None = Field(description="same_failure, related or not_related; null when not labelled yet")
    how: str | None = Field(description="engineer or inferred")
    who: str | None
    updated_at: datetime | None = None


class MarksWrite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    marks: dict[PrecedentId, Mark] = Field(min_length=1, max_length=50, description="precedent id -> mark")


def _incident(db: Session, public_id: str) -> Incident:
    incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
    if incident is None:
        raise HTTPException(404, f"no incident {public_id!r}")
    return incident


def _read(container: Container, db: Session, incident: Incident) -> list[LabelRead]:
    rows = labels.incident_labels(
        db_session=db, bank_id=container.settings.memory.bank_id, incident_id=incident.id
    )
    return [LabelRead(**line.__dict__) for line in relevance.label_lines(container, incident.id, rows)]


@router.get(
    "/{public_id}/labels", response_model=list[LabelRead], responses=errors("read", {404: NO_INCIDENT})
)
def list_labels(
    public_id: PublicId,
    _: Principal = Depends(require("read")),
    db: Session = Depends(get_db),
    container: Container = Depends(get_container),
) -> list[LabelRead]:
    """Each precedent the incident's briefings showed, with its label."""
    return _read(container, db, _incident(db, public_id))


@router.put(
    "/{public_id}/labels",
    response_model=list[LabelRead],
    responses=errors(
        "incidents:write",
        {404: NO_INCIDENT, 422: "a precedent the briefings did not show, or an unknown mark"},
    ),
)
async def put_labels(
    public_id: PublicId,
    body: MarksWrite,
    principal: Principal = Depends(require("incidents:write")),
    db: Session = Depends(get_db),
    container: Container = Depends(get_container),
) -> list[LabelRead]:
    """Mark (or correct) precedents; an engineer's mark replaces an inferred label."""
    incident = _incident(db, public_id)
    try:
        await run_in_threadpool(relevance.mark, container, incident, dict(body.marks), who=principal.name)
    except relevance.UnknownPrecedent as exc:
        raise HTTPException(422, str(exc)) from exc
    db.expire_all()
    return await run_in_threadpool(_read, container, db, incident)
