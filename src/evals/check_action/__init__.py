"""The action guard's eval: paraphrased moves paired with the seeded record they must (or must not) match.

Every pair is checked against every move of the seeded history (all 30 incidents and all runbooks, not
only what recall would bring back), scoped to the pair's service first as the product does. A pair
counts as a hit when the verdict is right and, for risky and worked-before, the expected record is
cited. Precision is hits over every verdict that was not "no record"; recall is hits over every pair
that expects one.

Imports the product (``agent`` for the guard, ``web.app.history`` for the seeds); nothing imports it.
"""

from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

import yaml

from agent.briefing.action_check import RecordedMove, check_action, moves_from_record, moves_from_runbook
from agent.core.similarity import Similarity
from web.app.history import load_seeds

PAIRS = "pairs.yaml"


@dataclass(frozen=True)
class Pair:
    service: str
    action: str
    verdict: str
    record: str | None = None


@dataclass
class Report:
    pairs: int
    positives: int
    flagged: int
    hits: int
    precision: float
    recall: float
    misses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_pairs() -> list[Pair]:
    text = resources.files("evals.check_action").joinpath(PAIRS).read_text(encoding="utf-8")
    return [Pair(**item) for item in yaml.safe_load(text)["pairs"]]


def seeded_moves() -> list[RecordedMove]:
    seeds = load_seeds()
    moves = [m for _, row in seeds.rows for m in moves_from_record(row.record())]
    return moves + [m for r in seeds.runbooks for m in moves_from_runbook(r.runbook_id, r.service, r.text())]


def evaluate(similarity: Similarity, pairs: list[Pair] | None = None) -> Report:
    pairs = pairs if pairs is not None else load_pairs()
    moves = seeded_moves()
    hits = flagged = 0
    misses: list[dict[str, Any]] = []
    for pair in pairs:
        result = check_action(pair.action, moves, service=pair.service, similarity=similarity)
        expected = pair.verdict != "no record"
        hit = expected and result.verdict == pair.verdict and pair.record in result.citations
        flagged += result.verdict != "no record"
        hits += hit
        if hit or (not expected and result.verdict == "no record"):
            continue
        misses.append(
            {
                "action": pair.action,
                "expected": f"{pair.verdict} {pair.record or ''}".strip(),
                "got": f"{result.verdict} {' '.join(result.citations)}".strip(),
                "score": result.matches[0].score if result.matches else None,
            }
        )
    positives = sum(p.verdict != "no record" for p in pairs)
    return Report(
        pairs=len(pairs),
        positives=positives,
        flagged=flagged,
        hits=hits,
        precision=round(hits / flagged, 3) if flagged else 1.0,
        recall=round(hits / positives, 3) if positives else 1.0,
        misses=misses,
    )
