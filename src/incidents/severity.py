"""One order of alert severities, read by escalation, a channel's ``min_severity`` and the profile.

Alerting systems name their levels differently: Alertmanager rules say ``critical``/``warning`` (or
``page``/``ticket``/``none``), Opsgenie and PagerDuty priorities are ``P1``..``P5``, incident-management
habit is ``SEV1``..``SEV5``, syslog has eight levels and Zabbix six. Each spelling is placed on one
ladder of seven levels, so ``P1`` outranks ``P3`` and ``sev-2`` outranks ``warning``. The ladder is an
order, nothing else: an alert keeps the severity it was sent with, and only comparisons read its level.

A spelling is read case-insensitively and without ``-``, ``_`` or spaces (``SEV-1``, ``Sev 1`` and
``sev1`` are one). Anything else ranks below every known level, so an unexpected label never
displaces a known one.

The ladder's first six levels keep the ranks the first words had (``critical`` and ``page`` 6 down to
``info`` 1); ``none`` (0) is the level below ``info``. Where a new spelling sits:

- ``P1``/``SEV1`` with ``critical``; ``P2``/``SEV2`` with ``high`` and ``major`` (Opsgenie calls P2
  High, the SEV habit calls SEV2 major); ``P3``/``SEV3`` with ``warning`` (what a warning is routed as
  by the usual Alertmanager-to-PagerDuty/Opsgenie mappings); ``P4``/``SEV4`` with ``low`` (Opsgenie's
  Low); ``P5``/``SEV5`` with ``info`` (Opsgenie's Informational).
- syslog: ``emergency``, ``alert`` and ``crit`` with ``critical``; ``err`` with ``error``; ``warn`` with
  ``warning``; ``notice`` with ``minor``; ``informational`` with ``info``; ``debug`` with ``none``.
  Syslog's top three are three levels, so within ``critical`` they keep its order: ``alert`` outranks
  the level's other spellings and ``emergency`` outranks ``alert`` (a crit alert re-sent as emerg
  escalates). What reads the level (the list filter, a page's colour) still sees one.
- Zabbix: ``disaster`` with ``critical``, ``average`` with ``warning``, ``information`` with ``info``,
  ``not classified`` with ``none``; its ``high`` and ``warning`` are the ladder's own.
- Grafana and Alertmanager habits: ``ticket`` (needs a person, not now) with ``warning``, ``none``
  (never meant to notify, such as a watchdog) at the bottom.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    """One rung of the ladder: its rank and every spelling that names it, the ladder's own word first."""

    rank: int
    spellings: tuple[str, ...]

    @property
    def name(self) -> str:
        """The ladder's own word for the level."""
        return self.spellings[0]


LADDER: tuple[Level, ...] = (
    Level(6, ("critical", "page", "crit", "emergency", "emerg", "alert", "disaster", "P1", "SEV1")),
    Level(5, ("high", "error", "major", "err", "P2", "SEV2")),
    Level(4, ("warning", "warn", "average", "ticket", "medium", "moderate", "P3", "SEV3")),
    Level(3, ("minor", "notice")),
    Level(2, ("low", "P4", "SEV4")),
    Level(1, ("info", "informational", "information", "P5", "SEV5")),
    Level(0, ("none", "debug", "not classified")),
)
UNKNOWN_RANK = -1  # below every level
_IGNORED = re.compile(r"[-_\s]+")
# Steps above the rest of their level, by spelling as looked up: syslog's alert and emergency.
_STEPS = {"alert": 1, "emergency": 2, "emerg": 2}


def normalised(severity: str) -> str:
    """How a spelling is looked up: lower case, without ``-``, ``_`` or whitespace."""
    return _IGNORED.sub("", severity).lower()


_LEVELS: dict[str, Level] = {normalised(spelling): level for level in LADDER for spelling in level.spellings}


def level_of(severity: str) -> Level | None:
    """The ladder level ``severity`` names, or None for one no alerting system here is known to send."""
    return _LEVELS.get(normalised(severity))


def rank(severity: str) -> int:
    """The level's rank, higher more urgent; an unknown severity ranks below every known one."""
    level = level_of(severity)
    return UNKNOWN_RANK if level is None else level.rank


def _urgency(severity: str) -> tuple[int, int]:
    """What comparisons order by: the level's rank, then the spelling's step within it (0 but for
    syslog's alert and emergency)."""
    return rank(severity), _STEPS.get(normalised(severity), 0)


def outranks(severity: str, than: str) -> bool:
    """Whether ``severity`` is more urgent than ``than`` (an unknown one outranks nothing known)."""
    return _urgency(severity) > _urgency(than)


def worst(severities: Iterable[str]) -> str:
    """The most urgent of ``severities``, the first of those alike."""
    return max(severities, key=_urgency)


def level_name(severity: str) -> str:
    """The ladder word for ``severity``'s level (``p1`` is ``critical``), ``unknown`` for none: what a
    page styles a severity by, while it shows the severity as sent."""
    level = level_of(severity)
    return "unknown" if level is None else level.name


def level_or_itself(severity: str) -> str:
    """The ladder word for ``severity``'s level, or ``severity`` itself when no level names it: what the
    incident list's severity filter offers and reads a choice as (an old link's ``p1`` is ``critical``)."""
    level = level_of(severity)
    return severity if level is None else level.name


def known_spellings() -> str:
    """Every accepted spelling, most urgent level first, the levels apart by ``>``: what an error
    refusing an unknown severity lists."""
    return " > ".join(", ".join(level.spellings) for level in LADDER)
