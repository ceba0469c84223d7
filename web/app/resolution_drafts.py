"""Resolution conversations in the service: what the agent is told, and the path its write takes.

``log_incident`` never writes memory from here either: ``ServiceRecorder`` hands the post-mortem to
the resolution service, which stores the resolution (a new version when one exists) and its memory
outbox row in one transaction; the worker then delivers the record. The API and the CLI share this.
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from agent.core.schema import Briefing
from agent.resolution.conversation import ResolutionDraft, ResolutionInputs, draft_resolution
from agent.resolution.log_tool import Recorded, ResolutionContext, open_resolution_conversation
from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.incident import service as incidents
from incidents.incident.models import Incident, IncidentEvent
from incidents.locking import serialized_writes
from incidents.resolution import service as resolutions
from incidents.resolution.models import ResolutionFields, ResolutionUpdate
from memory.text import clip
from web.app.agent import alert_for_incident, open_agent
from web.app.container import Container
from web.app.metrics import RESOLUTION_DRAFTS


@dataclass
class ServiceRecorder:
    """``log_incident``'s way to storage: the resolution service, in a transaction of its own."""

    sessions: sessionmaker[Session]
    actor: str
    wake: Callable[[], None] | None = None

    async def record(self, context: ResolutionContext, fields: dict[str, str], *, commit: bool) -> Recorded:
        recorded = await asyncio.to_thread(self._record, context, fields, commit)
        if recorded.written and self.wake is not None:
            self.wake()
        return recorded

    def _record(self, context: ResolutionContext, fields: dict[str, str], commit: bool) -> Recorded:
        post_mortem = ResolutionFields.model_validate(fields)
        if not commit:
            with self.sessions() as db:
                _still_there(db, context)
            return Recorded(
                written=False,
                version=None,
                message=f"Kept as a draft of the post-mortem of {context.public_id}; nothing was written. "
                "The engineer confirms it with the resolve endpoint.",
            )
        with transaction(self.sessions) as db, serialized_writes(db):
            incident = _still_there(db, context)
            try:
                resolution = resolutions.resolve(
                    db_session=db, incident=incident, fields=post_mortem, actor=self.actor
                ).resolution
            except resolutions.ResolutionConflict:
                resolution = resolutions.update_resolution(
                    db_session=db,
                    incident=incident,
                    changes=ResolutionUpdate(**post_mortem.model_dump()),
                    actor=self.actor,
                )
            version = resolution.version
            db.commit()
        return Recorded(
            written=True,
            version=version,
            message=f"Logged as the resolution of {context.public_id} (version {version}); "
            "memory is updated from it.",
        )


def _still_there(db: Session, context: ResolutionContext) -> Incident:
    incident = db.get(Incident, context.incident_id)
    if incident is None or incident.public_id != context.public_id:
        raise PermissionError(f"incident {context.public_id} no longer exists")
    return incident


def timeline_line(event: IncidentEvent) -> str:
    return f"{event.at:%Y-%m-%d %H:%M:%S} UTC {event.kind} by {event.actor}: {clip(event.message, 300)}"


def load(
    container: Container, *, public_id: str, notes: str, engineer: str
) -> tuple[ResolutionContext, ResolutionInputs] | None:
    """The gate and what the conversation is about, or ``None`` for an unknown incident."""
    with container.sessions() as db:
        incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
        if incident is None:
            return None
        context = open_resolution_conversation(db_session=db, public_id=public_id, engineer=engineer)
        row = briefings.latest_briefing(db_session=db, incident_id=incident.id)
        try:
            briefing = Briefing.model_validate(row.data) if row is not None else None
        except ValidationError:
            briefing = None
        return context, ResolutionInputs(
            alert=alert_for_incident(db_session=db, incident=incident),
            notes=notes,
            timeline=[timeline_line(e) for e in incidents.timeline(db_session=db, incident=incident)],
            briefing=briefing,
        )


async def draft(
    container: Container, *, public_id: str, notes: str, commit: bool, engineer: str
) -> ResolutionDraft:
    """Open the resolution conversation for ``engineer`` and run it; ``IncidentNotFound`` when there is
    no such incident."""
    loaded = await asyncio.to_thread(load, container, public_id=public_id, notes=notes, engineer=engineer)
    if loaded is None:
        raise incidents.IncidentNotFound(public_id)
    context, inputs = loaded
    wake = container.worker.wake if container.worker is not None else None
    recorder = ServiceRecorder(container.sessions, engineer, wake)
    async with open_agent(container) as agent:
        result = await draft_resolution(agent, inputs, context=context, recorder=recorder, commit=commit)
    RESOLUTION_DRAFTS.labels(mode=result.mode, logged=str(result.logged).lower()).inc()
    return result
