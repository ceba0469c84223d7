"""Memory search as engineers and agents read it: the agent's own recall, each hit with the confidence
that it is a relevant precedent for the text searched, by the fit this bank's briefings use (the team's
adopted refit once there is one), so the page, the API and the MCP tool give a record the probability
a briefing would."""

import asyncio
from dataclasses import dataclass

from agent.core.confidence import Confidence, precedent_confidence, same_scope
from agent.core.evidence import incident_service
from memory.service import RecalledIncident, recall_similar_incidents
from web.app.confidence import load_fit
from web.app.container import Container


@dataclass(frozen=True)
class Found:
    incident: RecalledIncident
    confidence: Confidence


async def recalled_precedents(
    container: Container, text: str, service: str | None, limit: int
) -> list[Found]:
    """Recall for ``text`` (``service`` only, when given), best first. Raises ``MemoryUnavailable``."""
    found = await recall_similar_incidents(container.bank, text, service=service, limit=limit)
    fit = await asyncio.to_thread(load_fit, container)
    ranking_model = container.bank.ranking_model
    return [
        Found(
            incident,
            precedent_confidence(
                incident,
                text,
                same_service=same_scope(service, incident_service(incident)),
                ranking_model=ranking_model,
                fit=fit,
            ),
        )
        for incident in found
    ]
