"""The words an alert and a remembered record are compared by, for the precedent confidence's overlaps.

Alerts are worded by alerting systems and tired engineers, records by whoever wrote the post-mortem,
so the comparison is made forgiving where wording varies and strict where it should not:

- words are compared by a light stem ("logins" is "login", "resolving" is "resolve");
- three-digit codes (HTTP statuses, exit codes) count, because 429 is not 502, but only when the alert
  names one: an alert without a code is not faulted for not repeating the record's;
- the alert's own name is left out: that an alert with the same name fired before is exactly what a
  healthy lookalike shares with a real fault, so it is no evidence of the same failure.
"""

import re

from memory.text import tokens

_CODE = re.compile(r"(?<![\w.])[1-5]\d\d(?![\w.])")
_SUFFIXES = ("ing", "ed", "es", "s")
MIN_WORDS = 4


def stem(word: str) -> str:
    """A light suffix strip, enough to meet plural and tense halfway; short words are left alone."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def codes(text: str) -> set[str]:
    return set(_CODE.findall(text))


def terms(text: str, *, with_codes: bool = True, masked: frozenset[str] = frozenset()) -> set[str]:
    """Stemmed content words of a text (and its codes), without the masked words."""
    found = {stem(t) for t in tokens(text) if t not in masked}
    return found | codes(text) if with_codes else found
