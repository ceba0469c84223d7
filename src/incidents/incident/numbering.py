"""Incident numbers: ``INC-0001``, ``INC-0002``, ... from one counter row, never shared."""

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from incidents.database import insert_ignoring_conflicts, table_of
from incidents.incident.models import Counter, Incident

INCIDENT_COUNTER = "incident"


def next_public_id(*, db_session: Session) -> str:
    """``INC-0001``, ``INC-0002``, ... from the counter row.

    ``UPDATE ... RETURNING`` increments and reads in one statement and holds the row lock until commit,
    so concurrent openers on PostgreSQL never share a number. Imported incidents may already use a
    number; those are skipped.
    """
    while True:
        value = db_session.scalar(
            update(Counter)
            .where(Counter.name == INCIDENT_COUNTER)
            .values(value=Counter.value + 1)
            .returning(Counter.value)
        )
        if value is None:
            _create_counter(db_session)
            continue
        public_id = f"INC-{value:04d}"
        if db_session.scalar(select(Incident.id).where(Incident.public_id == public_id)) is None:
            return public_id


def _create_counter(db_session: Session) -> None:
    """First incident ever: create the row, tolerating a concurrent creator."""
    dialect = db_session.get_bind().dialect.name
    db_session.execute(
        insert_ignoring_conflicts(dialect, table_of(Counter), ["name"]).values(name=INCIDENT_COUNTER, value=0)
    )
