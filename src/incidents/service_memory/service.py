"""Recording and reading the memory the service uses (``ServiceMemory``)."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from incidents.database import insert_ignoring_conflicts, table_of
from incidents.service_memory.models import THE_SERVICE, ServiceMemory
from incidents.timeutil import utcnow


@dataclass(frozen=True)
class Recorded:
    """The memory a ``recallops serve`` recorded, where and when."""

    driver: str
    location: str
    host: str
    recorded_at: datetime


def recorded(*, db_session: Session) -> Recorded | None:
    """What the service recorded last, or ``None`` when no ``recallops serve`` has run on this database."""
    row = db_session.get(ServiceMemory, THE_SERVICE)
    return None if row is None else Recorded(row.driver, row.location, row.host, row.recorded_at)


def record(*, db_session: Session, driver: str, location: str, host: str) -> Recorded | None:
    """Record the service's memory (replicas starting at once write the one row in turn); returns what
    was recorded before when that was another memory, so the service can say it moved."""
    before = recorded(db_session=db_session)
    values = {"driver": driver, "location": location, "host": host, "recorded_at": utcnow()}
    if before is None:
        dialect = db_session.get_bind().dialect.name
        insert = insert_ignoring_conflicts(dialect, table_of(ServiceMemory), ["id"])
        db_session.execute(insert.values(id=THE_SERVICE, **values))
    row = db_session.get(ServiceMemory, THE_SERVICE, populate_existing=True)
    assert row is not None
    for name, value in values.items():
        setattr(row, name, value)
    db_session.flush()
    return before if before is not None and before.location != location else None
