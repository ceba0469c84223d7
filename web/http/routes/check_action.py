"""``POST /api/v1/incidents/{id}/check-action``: is the move I am about to make one memory warns about?

Anyone who may read the incident may ask (a viewer too): the check reads memory and writes only a line
on the incident's timeline.
"""

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from web.app.check_action import (
    MAX_ACTION_CHARS,
    CheckActionRead,
    check_incident_action,
    check_read,
)
from web.app.container import Container
from web.http.auth import require
from web.http.body import StorableText
from web.http.deps import get_container
from web.http.routes.common import NO_INCIDENT, PublicId, errors, incident_errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"])


class CheckActionRequest(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    action: StorableText = Field(
        min_length=1,
        max_length=MAX_ACTION_CHARS,
        description="The move you are about to make, in your words",
        examples=["scale checkout to 18 pods"],
    )


@router.post(
    "/{public_id}/check-action",
    response_model=CheckActionRead,
    responses=errors("read", {404: NO_INCIDENT, 503: "memory unavailable: nothing was checked or recorded"}),
)
async def check_action_route(
    public_id: PublicId,
    body: CheckActionRequest,
    principal: Principal = Depends(require("read")),
    container: Container = Depends(get_container),
) -> CheckActionRead:
    """risky / worked before / no record, with the records it rests on; the check goes on the timeline."""
    with incident_errors(public_id):
        result = await check_incident_action(
            container, public_id=public_id, action=body.action, actor=principal.name
        )
    return check_read(result)
