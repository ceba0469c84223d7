"""Which memory the service uses: recorded by ``recallops serve``, compared by the admin commands.

``recallops serve`` records its memory (the driver and where it is) in the database it shares with
every admin shell. A command that writes memory from a shell whose own memory settings differ
(``RECALLOPS_MEMORY`` unset, so the embedded bank in its ``./data``) would otherwise put records where
the service never reads them; it compares first (``other_memory``) and refuses, and a reading command
warns.
"""

import socket

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from incidents.database import transaction
from incidents.locking import serialized_writes
from incidents.service_memory import service
from incidents.service_memory.service import Recorded
from web.app.settings import Settings

__all__ = ["Recorded", "describe", "other_memory", "record_in_use", "settings_to_set"]


def record_in_use(sessions: sessionmaker[Session], settings: Settings) -> Recorded | None:
    """Record the memory this service uses; returns the one recorded before, when it was another."""
    with transaction(sessions) as db, serialized_writes(db):
        before = service.record(
            db_session=db,
            driver=settings.memory.memory,
            location=settings.memory.location,
            host=socket.gethostname(),
        )
        db.commit()
    return before


def other_memory(sessions: sessionmaker[Session], settings: Settings) -> Recorded | None:
    """The memory the service recorded, when it is not the one ``settings`` open; ``None`` when it is
    the same, when no service recorded one yet, or when the database cannot say (a schema from before
    the record, a database not reached: the command itself then reports what it finds)."""
    try:
        with sessions() as db:
            found = service.recorded(db_session=db)
    except SQLAlchemyError:
        return None
    return found if found is not None and found.location != settings.memory.location else None


def describe(recorded: Recorded) -> str:
    """Where the service's memory is and who said so: ``hindsight URL bank B (recallops serve on H, T)``."""
    when = recorded.recorded_at.strftime("%Y-%m-%d %H:%M UTC")
    return f"{recorded.location} (recorded by recallops serve on {recorded.host}, {when})"


def settings_to_set(recorded: Recorded, settings: Settings) -> str:
    """The environment settings that choose the recorded memory, named for its driver: a Hindsight
    server and bank for Hindsight, the data directory for the embedded file (and the driver, when
    ``settings`` chose the other)."""
    if recorded.driver == "hindsight":
        return "RECALLOPS_MEMORY=hindsight, HINDSIGHT_BASE_URL, RECALLOPS_BANK_ID"
    if settings.memory.memory != "embedded":
        return "RECALLOPS_MEMORY=embedded, RECALLOPS_DATA_DIR"
    return "RECALLOPS_DATA_DIR"
