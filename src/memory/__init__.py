"""The memory bank: role protocols, an embedded driver and a Hindsight driver, the labeled template.

May import only itself, ``incidents.severity`` (the one order of severities), ``incidents.sqlite_wal``
(opening a SQLite file in WAL mode), ``incidents.env_settings`` (how every setting is read),
``incidents.time_input`` (what a time given from outside must be) and third-party libraries;
never the rest of ``incidents``, nor ``agent``, ``web`` or ``evals``.
Callers outside reach a bank through ``memory.service``; only the composition root opens a driver
(``memory.factory``).
"""

from memory.bank import (
    BankConfig,
    Health,
    MemoryBank,
    MemoryUnavailable,
    MentalModel,
    Operation,
    RecalledIncident,
    ReflectAnswer,
)
from memory.schema import IncidentRecord

__all__ = [
    "BankConfig",
    "Health",
    "IncidentRecord",
    "MemoryBank",
    "MemoryUnavailable",
    "MentalModel",
    "Operation",
    "RecalledIncident",
    "ReflectAnswer",
]
