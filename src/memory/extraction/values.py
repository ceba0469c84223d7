"""Values read from a span rather than copied from it: dates and how an incident ended."""

import re
from datetime import date

from memory.template import RESOLUTION_KINDS

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"[0-3]?\d(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
# ISO (2017-02-14), "February 14, 2017", "14 February 2017".
DATE = re.compile(
    rf"\b(?:{_YEAR}-[01]\d-[0-3]\d|{_MONTH}\s+{_DAY},?\s+{_YEAR}|{_DAY}\s+{_MONTH},?\s+{_YEAR})\b",
    re.IGNORECASE,
)
_PART = re.compile(r"[a-z]+|\d+")


def date_in(said: str) -> date | None:
    """The calendar date a ``DATE`` match names, or None when it names none (31 February)."""
    try:
        if said[:4].isdigit():
            return date.fromisoformat(said)
        parts = _PART.findall(said.lower())
        month = next(_MONTHS[p] for p in parts if p in _MONTHS)
        day, year = sorted((int(p) for p in parts if p.isdigit()), key=lambda n: n > 31)
        return date(year, month, day)
    except (ValueError, StopIteration):
        return None


_KIND_WORDS = {kind: kind.replace("-", " ") for kind in RESOLUTION_KINDS}


def kind_in(text: str) -> str:
    """The resolution kind a short label value names ("False alarm", "self recovered"), else ""."""
    spoken = " ".join(text.lower().replace("-", " ").replace("_", " ").split()).strip(" .")
    return next((kind for kind, said in _KIND_WORDS.items() if spoken == said), "")
