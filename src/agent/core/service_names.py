"""Where a text names a service: as written, or as engineers say it ("checkout" for checkout-service).

Read by the claims (which services a line acts on), the action guard (which service a move is about)
and the search across services, whose query leaves the names out (``without_names``).
"""

import re
from collections.abc import Iterable

# What a service's name ends with that engineers leave out when they say it.
_SUFFIX = re.compile(r"[-_ ](?:service|svc)$")
# A name shorter than this once its suffix goes ("api", "web") is a word of every alert, not a service.
MIN_SHORT_NAME = 4


def named_in(text: str, services: Iterable[str | None], *, spoken: bool = False) -> list[str]:
    """The services (each once, in order) that the text names as a word: "restart the payment-gateway
    pods" names payment-gateway. ``spoken`` text (a move an engineer types, an alert) names a service
    without its "-service" suffix too, as engineers say it ("restart all checkout pods":
    checkout-service); a recorded line is read as written, where "the loyalty pool" of a checkout record
    is no service."""
    said = text.lower()
    return [
        s
        for s in dict.fromkeys(filter(None, services))
        if any(_pattern(name).search(said) for name in _names_of(s, spoken))
    ]


def without_names(text: str, services: Iterable[str | None]) -> str:
    """The text with every name of these services, as written or said (``named_in``), taken out; the
    longest names first, so "checkout-service" goes whole, not as "checkout" and a dangling suffix."""
    names = {name for s in filter(None, services) for name in _names_of(s, spoken=True)}
    for name in sorted(names, key=len, reverse=True):
        text = _pattern(name).sub(" ", text)
    return text


def _names_of(service: str, spoken: bool) -> list[str]:
    """A service's name as written, and, spoken, without a "-service" suffix when a word of its own
    remains."""
    full = service.lower()
    short = _SUFFIX.sub("", full)
    return [full, short] if spoken and short != full and len(short) >= MIN_SHORT_NAME else [full]


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)
