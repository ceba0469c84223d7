from sqlalchemy import inspect
from sqlalchemy.orm import Session

from incidents.models import Counter


def test_migrations_create_every_table(db: Session) -> None:
    names = set(inspect(db.get_bind()).get_table_names())
    assert {"alerts", "incidents", "incident_events", "api_tokens", "users", "memory_outbox"} <= names


def test_counter_round_trip(db: Session) -> None:
    db.add(Counter(name="incident", value=7))
    db.flush()
    assert db.get(Counter, "incident").value == 7
