"""A failure pattern's name: a short phrase from the root-cause words its incidents share.

The first incident's raw error string ("HikariPool-1 - Connection is not available, request timed
out after 30000ms") says where it failed, not what failed. The name is taken instead from the root
causes: the words at least half of the members' root causes use are the shared words; the member
whose first clause holds most of them (then the shortest, then the lowest id) lends that clause,
without parenthesized details and service names; and the name is the run of at most ``MAX_WORDS``
words of that clause holding the most shared words (its first words when that run has fewer than
three content words), trimmed of stopwords at both ends. The same
members give the same name, whatever order they come in, so a refresh keeps it.
"""

import re
from collections.abc import Sequence

from memory.text import STOPWORDS, tokens

MAX_WORDS = 8
MIN_CONTENT_WORDS = 3
_PAREN = re.compile(r"\s*\([^()]*\)")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:so|because|which|but|while|after|when|until|since|and then)\s+", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.'/-]*")


def _first_clause(text: str, services: set[str]) -> list[str]:
    sentence = _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]
    sentence = _CLAUSE.split(_PAREN.sub("", sentence), maxsplit=1)[0]
    words = [w.rstrip(".,:;") for w in _WORD.findall(sentence)]
    return [w for w in words if w.lower() not in services and w.lower().rstrip("'s") not in services]


def _shared(causes: Sequence[str]) -> set[str]:
    counts: dict[str, int] = {}
    for cause in causes:
        for word in tokens(cause):
            counts[word] = counts.get(word, 0) + 1
    need = max(1, (len(causes) + 1) // 2)
    return {word for word, n in counts.items() if n >= need}


def _window(words: list[str], shared: set[str]) -> list[str]:
    """The run of at most MAX_WORDS words with the most shared words (earliest on a tie)."""
    best: tuple[int, int, int] = (-1, 0, 0)
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + MAX_WORDS) + 1):
            hits = sum(1 for w in words[start:end] if w.lower() in shared)
            if hits > best[0] or (hits == best[0] and end - start < best[2] - best[1] and hits > 0):
                best = (hits, start, end)
    _, start, end = best
    return _trimmed(words[start:end])


def _trimmed(run: list[str]) -> list[str]:
    while run and run[0].lower() in STOPWORDS:
        run = run[1:]
    while run and run[-1].lower() in STOPWORDS:
        run = run[:-1]
    return run


def failure_name(members: Sequence[tuple[str, str]], *, services: set[str], fallback: str) -> str:
    """The pattern's name from its members' ``(incident id, root cause)``; ``fallback`` when none."""
    ordered = sorted(members)
    causes = [cause for _, cause in ordered if cause.strip()]
    if not causes:
        return fallback
    lowered = {s.lower() for s in services}
    shared = _shared(causes)
    sentences = [_first_clause(cause, lowered) for cause in causes]
    lender = max(sentences, key=lambda words: (sum(w.lower() in shared for w in words), -len(words)))
    run = _window(lender, shared)
    if sum(w.lower() not in STOPWORDS for w in run) < MIN_CONTENT_WORDS:
        run = _trimmed(lender[:MAX_WORDS])  # too few shared words to name it: the clause's own start
    if not run:
        return fallback
    name = " ".join(run)
    return name[:1].upper() + name[1:]
