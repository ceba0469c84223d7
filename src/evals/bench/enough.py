"""The least a benchmark's figures can honestly be read from, and the refusal, in words, below it.

``bench rerank`` and ``bench calibration`` score every pair by a fit that never saw its query: the
queries (or fold groups) are cut into folds, and the isotonic map inside each training set into one
fold fewer, so with fewer groups than folds a fold is empty and a fit is asked of no pair at all. A
fit on pairs all relevant, or none, learns nothing of what makes a record relevant. And a figure over
no scored query is 0 as if it had been measured. Each check names what it found and what is needed,
so a command says it in one line instead of failing deep inside numpy.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class TooLittle(ValueError):
    """Input that reads but holds too little to measure: what was found, and how much is needed."""


class Labelled(Protocol):
    """A recalled pair as the checks read it: its fold group, and whether it was relevant."""

    @property
    def query(self) -> str: ...

    @property
    def relevant(self) -> bool: ...


def judged_by(corpus_path: Path, qrels_path: Path) -> str:
    """How a refusal names the corpus and its judgments."""
    return f"{corpus_path.name} with {qrels_path.name}"


def enough_queries(found: int, needed: int, *, judged: str, needs: str) -> None:
    """At least ``needed`` scored queries (with another record judged 2, the same failure) among
    ``found``; ``judged`` names the corpus and judgments, ``needs`` what needs them."""
    if found < needed:
        noun = "query" if found == 1 else "queries"
        raise TooLittle(
            f"{judged} holds {found} scored {noun} (a query with another record judged 2, the same "
            f"failure): {needs} at least {needed}"
        )


def enough_folds(pairs: Sequence[Labelled], folds: int, *, of: str, groups: str = "queries") -> None:
    """Pairs of at least one fold group per held-out fold; ``of`` names where the pairs come from."""
    found = len({pair.query for pair in pairs})
    if found < folds:
        raise TooLittle(
            f"{found} {groups} of {of} recalled a record: {folds} held-out folds need at least {folds}, "
            "one in each"
        )


def both_labels(pairs: Sequence[Labelled], *, of: str) -> None:
    """At least one relevant pair and one not; ``of`` names where the pairs come from."""
    relevant = sum(pair.relevant for pair in pairs)
    if not 0 < relevant < len(pairs):
        raise TooLittle(
            f"{relevant} of the {len(pairs)} pairs recalled for {of} are relevant: a fit needs at least "
            "one relevant pair and one not"
        )
