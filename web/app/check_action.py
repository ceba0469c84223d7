"""Checking a proposed move against memory for one incident, and putting the check on its timeline.

The page box, ``POST /api/v1/incidents/{id}/check-action``, ``recallops check-action`` and the MCP
``check_action`` tool all call ``check_incident_action``. It reads memory (three recalls: the alert's
own precedents on its service, then the move itself on the service and across services), judges the
move with ``agent.briefing.action_check`` and writes one timeline event. It never writes memory,
which is why a viewer may run it.
"""

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from agent.briefing.action_check import (
    ActionCheck,
    RecordedMove,
    check_action,
    moves_from_record,
    moves_from_runbook,
)
from agent.core.evidence import incident_service
from agent.core.similarity import Similarity
from incidents.database import transaction
from incidents.incident import service as incidents
from incidents.locking import serialized_writes
from memory.service import MemoryUnavailable, RecalledIncident, kind_tag, recall_similar_incidents
from web.app.agent import alert_for_incident
from web.app.container import Container

EVENT_KIND = "action-checked"
MAX_ACTION_CHARS = 500
RECALL_LIMIT = 8


@dataclass(frozen=True)
class IncidentActionCheck:
    incident: str
    service: str
    check: ActionCheck


def _moves(found: list[RecalledIncident], own_id: str) -> list[RecordedMove]:
    moves: list[RecordedMove] = []
    seen: set[str] = set()
    for incident in found:
        if incident.id in seen or incident.id == own_id or kind_tag("correction") in incident.tags:
            continue
        seen.add(incident.id)
        if kind_tag("runbook") in incident.tags:
            moves += moves_from_runbook(incident.id, incident_service(incident), incident.text)
        elif incident.record is not None:
            moves += moves_from_record(incident.record)
    return moves


async def recorded_moves(
    container: Container, *, action: str, service: str | None, alert_text: str | None = None, own_id: str = ""
) -> list[RecordedMove]:
    """The moves of the records memory recalls for this action (on the service, then anywhere) and, for
    an incident, for its alert's own precedents."""
    bank, timeout = container.bank, container.settings.memory.memory_timeout_s
    queries = [(alert_text, service)] if alert_text else []
    queries += [(action, service), (action, None)] if service else [(action, None)]
    calls = [recall_similar_incidents(bank, text, scope, RECALL_LIMIT) for text, scope in queries]
    try:
        results = await asyncio.wait_for(asyncio.gather(*calls), timeout=timeout)
    except TimeoutError as exc:
        raise MemoryUnavailable("memory did not answer in time") from exc
    return _moves([i for found in results for i in found], own_id)


async def judge(
    container: Container, action: str, moves: list[RecordedMove], service: str | None
) -> ActionCheck:
    similarity = Similarity(container.embedder, container.bank.item_vectors)
    return await asyncio.to_thread(check_action, action, moves, service=service, similarity=similarity)


async def check_service_action(container: Container, *, action: str, service: str | None) -> ActionCheck:
    """Judge ``action`` with no incident to attach it to (the MCP ``check_action`` tool): the same
    verdict from the same records, and nothing is written, not even a timeline event."""
    action = " ".join(action.split())[:MAX_ACTION_CHARS]
    moves = await recorded_moves(container, action=action, service=service)
    return await judge(container, action, moves, service)


async def check_incident_action(
    container: Container, *, public_id: str, action: str, actor: str
) -> IncidentActionCheck:
    """Judge ``action`` for the incident and record the check on its timeline (raises
    ``IncidentNotFound``, or ``MemoryUnavailable`` when memory cannot be read: nothing is recorded then)."""
    action = " ".join(action.split())[:MAX_ACTION_CHARS]
    with container.sessions() as db:
        incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
        if incident is None:
            raise incidents.IncidentNotFound(public_id)
        alert = alert_for_incident(db_session=db, incident=incident)
        service = incident.service
    moves = await recorded_moves(
        container, action=action, alert_text=alert.description, service=service, own_id=public_id
    )
    check = await judge(container, action, moves, service)
    with transaction(container.sessions) as db, serialized_writes(db):
        incident = incidents.get_by_public_id(db_session=db, public_id=public_id)
        if incident is None:
            raise incidents.IncidentNotFound(public_id)
        incidents.add_event(
            db_session=db,
            incident=incident,
            kind=EVENT_KIND,
            actor=actor,
            message=f"checked {action!r} against memory: {check.verdict}"
            + (f" ({', '.join(check.citations)})" if check.citations else ""),
            data={"action": action, "verdict": check.verdict, "scope": check.scope, "cites": check.citations},
        )
        db.commit()
    return IncidentActionCheck(incident=public_id, service=service, check=check)


class MatchedMoveRead(BaseModel):
    record: str = Field(description="The incident or runbook that records the move")
    service: str
    kind: Literal["failed attempt", "risky action", "resolution step"]
    text: str = Field(description="The recorded line")
    then: str = Field(description="What happened then")
    when: datetime | None
    score: float
    same_service: bool


class VerdictRead(BaseModel):
    """A verdict on its own: what ``check_action`` over MCP answers, with no incident."""

    action: str
    verdict: Literal["risky", "worked before", "no record"]
    scope: Literal["service", "cross-service", "none"] = Field(
        description="Whether the matches are on the incident's service or, failing that, on others"
    )
    sentence: str
    citations: list[str]
    matches: list[MatchedMoveRead]


class CheckActionRead(VerdictRead):
    incident: str


def verdict_read(check: ActionCheck) -> VerdictRead:
    return VerdictRead(
        action=check.action,
        verdict=check.verdict,
        scope=check.scope,
        sentence=check.sentence,
        citations=check.citations,
        matches=[
            MatchedMoveRead(
                record=m.move.record_id,
                service=m.move.service,
                kind=m.move.kind,
                text=m.move.text,
                then=m.move.then,
                when=m.move.when,
                score=m.score,
                same_service=m.same_service,
            )
            for m in check.matches
        ],
    )


def check_read(result: IncidentActionCheck) -> CheckActionRead:
    return CheckActionRead(incident=result.incident, **verdict_read(result.check).model_dump())
