"""``POST /api/v1/incidents/{id}/check-action``: is the move I am about to make one memory warns about?

Anyone who may read the incident may ask (a viewer too): the check reads memory and writes only a line
on the incident's timeline.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path
from pydantic import BaseModel, ConfigDict, Field

from memory.service import MemoryUnavailable
from web.app.check_action import (
    MAX_ACTION_CHARS,
    CheckActionRead,
    IncidentNotFound,
    check_incident_action,
    check_read,
)
from web.app.container import Container
from web.http.auth import require
from web.http.deps import get_container
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"])

PublicId = Annotated[str, Path(min_length=1, max_length=64, description="Readable id, e.g. INC-0001")]


class CheckActionRequest(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    action: str = Field(
        min_length=1,
        max_length=MAX_ACTION_CHARS,
        description="The move you are about to make, in your words",
        examples=["scale checkout to 18 pods"],
    )


@router.post(
    "/{public_id}/check-action",
    response_model=CheckActionRead,
    responses={
        401: {"description": "missing or invalid credentials"},
        403: {"description": "lacks the read scope"},
        404: {"description": "no such incident"},
        503: {"description": "memory unavailable: nothing was checked or recorded"},
    },
)
async def check_action_route(
    public_id: PublicId,
    body: CheckActionRequest,
    principal: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> CheckActionRead:
    """risky / worked before / no record, with the records it rests on; the check goes on the timeline."""
    try:
        result = await check_incident_action(
            container, public_id=public_id, action=body.action, actor=principal.name
        )
    except IncidentNotFound as exc:
        raise HTTPException(404, f"no incident {public_id!r}") from exc
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}") from exc
    return check_read(result)
