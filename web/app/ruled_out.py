"""What the team ruled out for an alert before: the precedents an engineer marked "not related" when an
earlier incident of the same alert (its service and rule) was resolved, for the briefing to say beside
them (``agent.core.evidence.Refuted``). A database that cannot answer costs the briefing this note, not
the briefing."""

import asyncio
import logging
from collections.abc import Mapping

from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError

from agent.core.evidence import AlertInput, Refuted
from incidents.labels import service as labels
from incidents.labels.models import RelevanceLabel
from web.app.container import Container

log = logging.getLogger(__name__)


class RuledOut:
    """``agent.briefing.loop.Refutations`` over this bank's labels."""

    def __init__(self, container: Container) -> None:
        self._container = container

    async def refuted(self, alert: AlertInput) -> Mapping[str, Refuted]:
        if not alert.service or not alert.alertname:
            return {}
        try:
            return await asyncio.to_thread(self._read, alert.service, alert.alertname, alert.incident_id)
        except SQLAlchemyError:
            log.warning("labels unreadable: the briefing says nothing of what was ruled out", exc_info=True)
            return {}

    def _read(self, service: str, alertname: str, excluding: str | None) -> dict[str, Refuted]:
        with self._container.sessions() as db:
            if not inspect(db.get_bind()).has_table(RelevanceLabel.__tablename__):
                return {}
            found = labels.ruled_out(
                db_session=db,
                bank_id=self._container.settings.memory.bank_id,
                service=service,
                alertname=alertname,
                excluding=excluding,
            )
            return {
                label.precedent: Refuted(public_id, label.who, label.updated_at) for label, public_id in found
            }
