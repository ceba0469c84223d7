"""Relevance labels on SQLite and PostgreSQL: an engineer's mark wins, corrections replace, per bank."""

from datetime import timedelta

from sqlalchemy.orm import Session

from incidents.labels import service as labels
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident

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
