"""The agent wired to this process: what it is told about a stored incident, and the agent itself.

Apart from the briefing worker (``web.app.briefings``), so the commands that brief or check a move
from a terminal (``recallops ask``, ``check-action``, ``replay``) load neither the worker's job
queue nor the metrics it reports.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.orm import Session

from agent.briefing.loop import Agent
from agent.briefing.profile_evidence import ProfileSource
from agent.core.confidence import Scorer
from agent.core.evidence import AlertInput
from agent.llm import open_model
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from web.app.confidence import load_fit
from web.app.container import Container
from web.app.ruled_out import RuledOut

MAX_ALERT_CHARS = 4000
_QUIET_LABELS = {"alertname", "service", "severity", "job", "instance", "__name__"}


def alert_for_incident(*, db_session: Session, incident: Incident) -> AlertInput:
    """What the agent is told about a stored incident: its first and latest alert, labels included.

    The title already carries the incident's title (most often the first alert's summary), so a summary
    that only repeats it is not said twice: a repeated sentence would weigh double in the recall query.
    """
    alerts = incidents.incident_alerts(db_session=db_session, incident=incident)
    chosen = [alerts[0], alerts[-1]] if len(alerts) > 1 else alerts
    parts: list[str] = []
    for alert in chosen:
        for text in (alert.summary, alert.description):
            if text and text not in parts and text != incident.title:
                parts.append(text)
        labels = ", ".join(f"{k}={v}" for k, v in sorted(alert.labels.items()) if k not in _QUIET_LABELS)
        if labels and f"Labels: {labels}" not in parts:
            parts.append(f"Labels: {labels}")
    text = "\n".join(parts) or incident.title
    title = (
        incident.title if incident.alertname in incident.title else f"{incident.alertname}: {incident.title}"
    )
    return AlertInput(
        text=text[:MAX_ALERT_CHARS],
        service=incident.service,
        title=title,
        severity=incident.severity,
        incident_id=incident.public_id,
        alertname=incident.alertname,
    )


@asynccontextmanager
async def open_agent(container: Container, *, fit: Scorer | None = None) -> AsyncIterator[Agent]:
    """The agent of this process; ``fit`` is the confidence model it briefs with (the bank's own, from
    ``web.app.confidence``, when None)."""
    settings = container.settings
    fit = fit or await asyncio.to_thread(load_fit, container)
    model = open_model(settings.llm)
    try:
        yield Agent(
            model=model,
            bank=container.bank,
            memory_timeout_s=settings.memory.memory_timeout_s,
            profile=ProfileSource(container.bank, timeout_s=settings.memory.memory_timeout_s),
            embedder=container.embedder,
            fit=fit,
            known_vectors=container.bank.item_vectors,
            refutations=RuledOut(container),
        )
    finally:
        await model.aclose()
