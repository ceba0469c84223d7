"""The memory the service records (``incidents.service_memory``), on SQLite and PostgreSQL."""

from sqlalchemy.orm import Session

from incidents.service_memory import service

HINDSIGHT = "hindsight http://hindsight:8888 bank meridian-commerce-incidents"
EMBEDDED = "embedded /srv/recallops/data/memory.db"


def test_nothing_is_recorded_until_a_service_records_its_memory(db: Session) -> None:
    assert service.recorded(db_session=db) is None
    assert service.record(db_session=db, driver="hindsight", location=HINDSIGHT, host="replica-a") is None
    found = service.recorded(db_session=db)
    assert found is not None
    assert (found.driver, found.location, found.host) == ("hindsight", HINDSIGHT, "replica-a")


def test_a_replica_recording_the_same_memory_is_not_a_move_and_another_memory_is(db: Session) -> None:
    service.record(db_session=db, driver="embedded", location=EMBEDDED, host="laptop")
    assert service.record(db_session=db, driver="embedded", location=EMBEDDED, host="laptop") is None
    moved = service.record(db_session=db, driver="hindsight", location=HINDSIGHT, host="replica-b")
    assert moved is not None and (moved.location, moved.host) == (EMBEDDED, "laptop")
    found = service.recorded(db_session=db)
    assert found is not None and (found.location, found.host) == (HINDSIGHT, "replica-b")
