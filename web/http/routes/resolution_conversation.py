"""Starting a resolution conversation: the engineer's notes in, a cited post-mortem draft out.

The only door to ``log_incident``. The caller needs ``incidents:write``; the conversation is opened
for the existing incident in their name, and with ``commit`` the post-mortem is stored through the
resolution service (``resolved_by`` = the caller). Without it nothing is written: the engineer
confirms the draft (``resolve_body``) with ``POST .../resolve``.
"""

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from agent.resolution.conversation import MAX_NOTES_CHARS, ResolutionDraft
from web.app import resolution_drafts
from web.app.container import Container
from web.http.auth import require
from web.http.body import StorableText
from web.http.deps import get_container
from web.http.routes.common import NO_INCIDENT, PublicId, errors, incident_errors
from web.http.security import Principal

router = APIRouter(prefix="/api/v1/incidents", tags=["resolutions"])


class ConversationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    notes: StorableText = Field(
        min_length=1,
        max_length=MAX_NOTES_CHARS,
        description="What happened and what fixed it, in the engineer's words. Labeled lines "
        "('Root cause: ...', 'Outcome: ...') go to their fields.",
    )
    commit: StrictBool = Field(
        default=False, description="Store the post-mortem as the resolution when it is complete"
    )


@router.post(
    "/{public_id}/resolution-conversation",
    response_model=ResolutionDraft,
    responses=errors("incidents:write", {404: NO_INCIDENT, 422: "notes missing, blank or too long"}),
)
async def resolution_conversation(
    public_id: PublicId,
    body: ConversationRequest,
    principal: Principal = Depends(require("incidents:write")),
    container: Container = Depends(get_container),
) -> ResolutionDraft:
    """Draft the post-mortem from the notes, the alert, the timeline and the latest briefing."""
    with incident_errors(public_id):
        return await resolution_drafts.draft(
            container, public_id=public_id, notes=body.notes, commit=body.commit, engineer=principal.name
        )
