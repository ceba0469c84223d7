"""The memory bank: one interface, an embedded driver and a Hindsight driver, the labeled template."""

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
