"""Relevance labels on SQLite and PostgreSQL: an engineer's mark wins, corrections replace, per bank."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from incidents.database import make_engine, make_session_factory, upgrade
from incidents.labels import service as labels
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident
from tests.support.net import wait_for

BANK = "team-a"


def _store(db: Session, incident_id: int, mark: str, how: str, who: str, bank: str = BANK) -> object:
    return labels.store_label(
        db_session=db,
        bank_id=bank,
        incident_id=incident_id,
        precedent="INC-0007",
        mark=mark,
        how=how,
        who=who,
        probability=0.42,
        features=[0.1, 0.2],
    )


def test_an_inferred_label_never_replaces_an_engineers_mark(db: Session) -> None:
    incident = make_incident(db)
    _store(db, incident.id, "related", labels.ENGINEER, "oncall")
    assert _store(db, incident.id, "not_related", labels.INFERRED, "recallops") is None
    [row] = labels.incident_labels(db_session=db, bank_id=BANK, incident_id=incident.id)
    assert (row.mark, row.how, row.who, row.features) == ("related", "engineer", "oncall", [0.1, 0.2])


def test_an_engineer_corrects_an_inferred_label_in_place(db: Session) -> None:
    incident = make_incident(db)
    _store(db, incident.id, "not_related", labels.INFERRED, "recallops")
    _store(db, incident.id, "same_failure", labels.ENGINEER, "oncall")
    [row] = labels.incident_labels(db_session=db, bank_id=BANK, incident_id=incident.id)
    assert (row.mark, row.how, row.who) == ("same_failure", "engineer", "oncall")


def test_labels_are_per_bank_and_counted_since_a_time(db: Session) -> None:
    incident = make_incident(db)
    before = utcnow() - timedelta(seconds=1)
    _store(db, incident.id, "related", labels.ENGINEER, "oncall")
    _store(db, incident.id, "related", labels.ENGINEER, "oncall", bank="team-b")
    assert len(labels.bank_labels(db_session=db, bank_id=BANK)) == 1
    assert labels.changed_since(db_session=db, bank_id=BANK, since=before) == 1
    assert labels.changed_since(db_session=db, bank_id=BANK, since=utcnow() + timedelta(seconds=1)) == 0
    assert labels.changed_since(db_session=db, bank_id="team-c", since=None) == 0


def test_what_engineers_ruled_out_for_an_alert_is_read_by_its_service_and_rule(db: Session) -> None:
    first = make_incident(db, "INC-0001", status="resolved")
    other_rule = make_incident(db, "INC-0002", status="resolved")
    other_rule.alertname = "CheckoutErrorsHigh"
    other_service = make_incident(db, "INC-0003", service="cart-service", status="resolved")
    for incident in (first, other_rule, other_service):
        _store(db, incident.id, "not_related", labels.ENGINEER, "oncall")
    inferred = make_incident(db, "INC-0004", status="resolved")
    labels.store_label(
        db_session=db,
        bank_id=BANK,
        incident_id=inferred.id,
        precedent="INC-0008",
        mark="not_related",
        how=labels.INFERRED,
        who="recallops",
    )

    def ruled_out(excluding: str | None = None, bank: str = BANK) -> list[tuple[str, str, str]]:
        found = labels.ruled_out(
            db_session=db,
            bank_id=bank,
            service="checkout-service",
            alertname="CheckoutLatencyHigh",
            excluding=excluding,
        )
        return [(label.precedent, public_id, label.who) for label, public_id in found]

    # Only an engineer's mark, on an incident of this service and rule, in this bank.
    assert ruled_out() == [("INC-0007", "INC-0001", "oncall")]
    assert ruled_out(bank="team-b") == []
    assert ruled_out(excluding="INC-0001") == []  # an incident's own marks are not "before"
    # A later incident of the alert where the engineer called it the same failure takes it back.
    later = make_incident(db, "INC-0005", status="resolved")
    _store(db, later.id, "same_failure", labels.ENGINEER, "dana")
    assert ruled_out() == []


def _blocked_writers(engine: Engine) -> int:
    with engine.connect() as connection:
        query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        return int(connection.execute(text(query)).scalar_one())


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_two_replicas_labelling_one_precedent_at_once_store_one_label_and_the_engineers_wins(
    database_url: str,
) -> None:
    """Every replica's grading lane labels a resolved incident's precedents; one that finds no label and
    inserts after another replica did must apply its label to that row, not fail on the unique key."""
    engine = make_engine(database_url)
    upgrade(engine)
    sessions = make_session_factory(engine)
    try:
        with sessions() as setup:
            incident_id = make_incident(setup).id
            setup.commit()
        with sessions() as first, ThreadPoolExecutor(1) as pool:
            _store(first, incident_id, "not_related", labels.INFERRED, "recallops")  # holds the key

            def engineer() -> None:
                with sessions() as db:
                    assert _store(db, incident_id, "same_failure", labels.ENGINEER, "oncall") is not None
                    db.commit()

            racing = pool.submit(engineer)
            wait_for(
                lambda: _blocked_writers(engine), timeout=30, what="the second insert to wait on the key"
            )
            first.commit()
            racing.result(timeout=30)
        with sessions() as db:
            [row] = labels.incident_labels(db_session=db, bank_id=BANK, incident_id=incident_id)
            assert (row.mark, row.how, row.who) == ("same_failure", "engineer", "oncall")
    finally:
        engine.dispose()
