"""Whether two short texts say the same thing: shared word stems, and their meaning when an embedder is
at hand.

The briefing head merges near-duplicate steps, the action guard matches a proposed move against the
recorded ones and the grader compares a likely cause with the recorded root cause; all three ask this
one question, so they share one answer. Words are crudely stemmed ("scaling", "scaled" and "scale"
meet at "scal") because post-mortems are written in the past tense and checks in the imperative.
Vectors are cached per text: a briefing compares each item with every other. Texts memory embedded
when it retained their record (``known``, the bank's item vectors) are looked up, not embedded again;
this lookup is the one place the comparison meets stored vectors.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

import numpy as np

from memory.embedder import Embedder
from memory.items import without_details
from memory.text import tokens

# Operations verbs and nouns that name the same move, folded to one stem after stemming: "add replicas",
# "spin up instances" and "scale pods" are one move; "bounce" and "restart" one verb.
_SAME_MOVE = (
    ("scal", "add", "spin", "provision"),
    ("rais", "increas", "bump", "boost", "doubl", "grow", "enlarg", "bigger", "larger"),
    ("lower", "reduc", "cut", "decreas", "shrink", "smaller"),
    ("pod", "replica", "instanc"),
    ("restart", "bounc", "reboot", "recycl"),
    ("purg", "flush", "wip", "invalidat"),
    ("cancel", "abort"),
    ("full", "whol", "entir"),
    ("stop", "halt"),
    ("cert", "certificat"),
)
# Stored vectors of the texts memory knows, by text (the bank's ``item_vectors``).
KnownVectors = Callable[[Sequence[str]], Mapping[str, np.ndarray]]
_CANONICAL = {word: group[0] for group in _SAME_MOVE for word in group}
_SUFFIXES = ("ingly", "ing", "ied", "ies", "ed", "es", "s", "ly")
_KEEP_DOUBLE = frozenset("lsz")
# Two lines say the same when shared stems and meaning together reach this (tuned on the demo's pool
# briefing, where "rolled the pods one at a time" and "Roll pods one at a time" must meet and a pool
# raise and a pod restart must not), or when the meaning alone is this close.
SAME_AT = 0.5
SAME_COSINE = 0.8
SAME_LEXICAL = 0.6  # without an embedder


@lru_cache(maxsize=1 << 16)  # a briefing stems the same record words many times
def stem(word: str) -> str:
    """A word without its inflection: enough to match "rolled" with "roll" and "pods" with "pod"."""
    root = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)] + ("y" if suffix in ("ied", "ies") else "")
            break
    if len(root) > 3 and root[-1] == root[-2] and root[-1] not in _KEEP_DOUBLE:
        root = root[:-1]
    if len(root) > 3 and root.endswith("e"):
        root = root[:-1]
    return root


def stems(text: str) -> set[str]:
    """The stemmed content words of a text (stopwords, numbers and hex ids left out), synonyms folded."""
    return {_CANONICAL.get(s, s) for s in (stem(t) for t in tokens(text))}


def overlap(a: set[str], b: set[str]) -> float:
    """The share of the smaller set found in the other: 1.0 when one text's words are all in the other."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def coverage(query: set[str], target: set[str]) -> float:
    """The share of ``query``'s words found in ``target``."""
    return len(query & target) / len(query) if query else 0.0


class Similarity:
    """Lexical and (with an embedder) semantic similarity of short texts, vectors cached per text."""

    def __init__(self, embedder: Embedder | None, known: KnownVectors | None = None) -> None:
        self.embedder = embedder
        self.known = known
        self._vectors: dict[str, np.ndarray] = {}

    def prepare(self, texts: Iterable[str]) -> None:
        """A vector for every text not seen yet: stored ones looked up, the rest embedded in one batch
        (a batch is much cheaper than single calls)."""
        if self.embedder is None:
            return
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing and self.known is not None:
            self._vectors.update(self.known(missing))
            missing = [t for t in missing if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector

    def cosine(self, a: str, b: str) -> float | None:
        """Cosine of the two texts' vectors, or ``None`` without an embedder."""
        if self.embedder is None:
            return None
        self.prepare((a, b))
        return float(np.dot(self._vectors[a], self._vectors[b]))

    def score(self, a: str, b: str) -> float:
        """How close two lines are: shared stems and meaning, half each (stems alone without an
        embedder), on the scale ``same`` reads against ``SAME_AT`` (``SAME_LEXICAL`` without one)."""
        lexical = overlap(stems(a), stems(b))
        cosine = self.cosine(a, b)
        return lexical if cosine is None else 0.5 * cosine + 0.5 * lexical

    def same(self, a: str, b: str) -> bool:
        """Whether two lines say the same thing, as written or without their parenthesized details:
        the one question the briefing head and the claim guard ask."""
        return self._same(a, b) or self._same(without_details(a), without_details(b))

    def _same(self, a: str, b: str) -> bool:
        cosine = self.cosine(a, b)
        if cosine is None:
            return self.score(a, b) >= SAME_LEXICAL
        return cosine >= SAME_COSINE or self.score(a, b) >= SAME_AT

    def best(self, query: str, candidates: Sequence[str]) -> list[float]:
        """The cosine of ``query`` with each candidate (zeros without an embedder)."""
        if self.embedder is None or not candidates:
            return [0.0] * len(candidates)
        self.prepare([query, *candidates])
        q = self._vectors[query]
        return [float(np.dot(q, self._vectors[c])) for c in candidates]
