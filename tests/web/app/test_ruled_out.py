"""What engineers ruled out for an alert, read from the bank's labels for the briefing to say."""

from dataclasses import replace

import pytest
from sqlalchemy.exc import OperationalError

from agent.core.evidence import AlertInput
from incidents.database import transaction
from incidents.labels import service as labels
from tests.incidents.resolution.factories import make_incident
from web.app.container import Container
from web.app.ruled_out import RuledOut

ALERT = AlertInput(
    text="checkout p99 over 2 s",
    service="checkout-service",
    alertname="CheckoutLatencyHigh",
    incident_id="INC-0002",
)


async def test_an_engineers_not_related_on_an_earlier_incident_of_the_alert_is_read_back(
    container: Container,
) -> None:
    with transaction(container.sessions) as db:
        earlier = make_incident(db, "INC-0001", status="resolved")
        make_incident(db, "INC-0002")
        labels.store_label(
            db_session=db,
            bank_id=container.settings.memory.bank_id,
            incident_id=earlier.id,
            precedent="INC-2025-079",
            mark="not_related",
            how=labels.ENGINEER,
            who="dana",
        )
        db.commit()
    ruled = RuledOut(container)
    found = await ruled.refuted(ALERT)
    assert list(found) == ["INC-2025-079"]
    assert (found["INC-2025-079"].incident, found["INC-2025-079"].who) == ("INC-0001", "dana")
    assert (
        await ruled.refuted(replace(ALERT, alertname=None)) == {}
    )  # a question, not an alert: nothing to match
    assert await ruled.refuted(replace(ALERT, service="cart-service")) == {}


async def test_labels_that_cannot_be_read_cost_the_note_not_the_briefing(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(**_: object) -> None:
        raise OperationalError("SELECT", {}, Exception("database is locked"))

    monkeypatch.setattr(labels, "ruled_out", down)
    assert await RuledOut(container).refuted(ALERT) == {}
