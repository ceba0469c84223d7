"""What an alert and a remembered record say in common, word for word: the lexical half of a match.

Alerts are worded by alerting systems and tired engineers, records by whoever wrote the post-mortem,
so the comparison is made forgiving where wording varies and strict where it should not:

- words are compared by a light stem ("logins" is "login", "resolving" is "resolve");
- three-digit codes (HTTP statuses, exit codes) count, because 429 is not 502, but only when the alert
  names one: an alert without a code is not faulted for not repeating the record's;
- the alert's own name is left out: that an alert with the same name fired before is exactly what a
  healthy lookalike shares with a real fault, so it is no evidence of the same failure.
"""

import re

from memory.schema import IncidentRecord
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


def lexical(record: IncidentRecord | None, text: str, alert: str, alertname: str | None = None) -> float:
    """0..1: the share of the record's error signature the alert repeats, or the share of the alert's
    words found in the record's signature, symptom and root cause (counted over at least four words, so
    a two-word alert cannot match fully on one shared word). ``text`` stands in for a record that did
    not parse."""
    masked = frozenset({alertname.lower()}) if alertname else frozenset()
    alert_terms = terms(alert, masked=masked)
    signature_text = record.error_signature if record else text[:400]
    signature = terms(signature_text, with_codes=bool(codes(alert)), masked=masked)
    core_text = f"{record.error_signature} {record.symptom} {record.root_cause}" if record else text
    core = terms(core_text, masked=masked)
    repeated = len(signature & alert_terms) / len(signature) if signature else 0.0
    covered = len(alert_terms & core) / max(len(alert_terms), MIN_WORDS)
    return max(repeated, covered)
