"""The memory the service uses: one row, written by ``recallops serve`` when it starts.

An admin shell shares the database with the service but not its environment. A command there that
writes memory under its own settings (the embedded bank in its ``./data`` by default) would put records
where the service never reads them; this row is what it compares its own memory with first.
"""

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime

THE_SERVICE = 1  # the one row's id: a deployment's replicas all use one memory


class ServiceMemory(Base):
    __tablename__ = "service_memory"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    driver: Mapped[str] = mapped_column(String(16))
    # Where that memory is, in words that tell two apart: the Hindsight server and bank, or the
    # embedded file's absolute path.
    location: Mapped[str] = mapped_column(String(1024))
    host: Mapped[str] = mapped_column(String(255))  # the machine the recording replica ran on
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)
