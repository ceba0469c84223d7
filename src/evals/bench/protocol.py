"""The ranking protocol: per-query figures, folds and halves, the channel floor, paired bootstrap, misses.

A ranking change is decided on the dev split only, and only when it holds up:

- **folds and halves**: the scored queries are cut into five fixed folds (and, separately, two fixed
  halves); every figure is also given per fold, so a change that wins on one half and loses on the
  other is visible and is not adopted;
- **the channel floor**: the hybrid ranking (the recall tool's) must never be worse than the better
  single channel, in either scope, at R@1, R@5 and MRR@10: pooled over all queries, and in no fold
  behind by more than one query's worth (one query moving from hit to miss, or its reciprocal rank
  dropping to zero);
- **paired bootstrap**: the difference of two methods' means over the same queries, resampled by
  query, gives a 95% interval; an interval that contains zero is not a win;
- **misses**: the queries where the hybrid ranking places the first relevant record lower than a
  single channel does (or not at all in the top ten), so a regression can be read query by query.
"""

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.bench.ranking import Qrels, folds, hit_at, judged, reciprocal_rank, scored_queries

Rankings = Mapping[str, Sequence[str]]  # query id -> ranked document ids
METRICS = ("recall@1", "recall@5", "mrr@10")
CHANNELS = ("bm25", "embedding")
HYBRID = "hybrid"
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 7


def per_query(rankings: Rankings, qrels: Qrels) -> dict[str, dict[str, float]]:
    """Each scored query's R@1, R@5 and reciprocal rank (the means of these are the pooled figures)."""
    out: dict[str, dict[str, float]] = {}
    for query in scored_queries(qrels):
        grades = judged(qrels, query)
        ranking = [d for d in rankings.get(query, ()) if d != query]
        out[query] = {
            "recall@1": float(hit_at(ranking, grades, 1)),
            "recall@5": float(hit_at(ranking, grades, 5)),
            "mrr@10": reciprocal_rank(ranking, grades),
        }
    return out


def first_relevant(ranking: Sequence[str], grades: Mapping[str, int], k: int = 10) -> int | None:
    rr = reciprocal_rank(ranking, grades, k)
    return round(1 / rr) if rr else None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def by_fold(scores: Mapping[str, Mapping[str, float]], groups: list[list[str]]) -> list[dict[str, float]]:
    """The pooled metrics of each group of queries."""
    return [
        {m: round(_mean([scores[q][m] for q in group if q in scores]), 4) for m in METRICS}
        for group in groups
    ]


@dataclass(frozen=True)
class FloorCheck:
    """The hybrid ranking against the better single channel for one scope and metric (``fused`` is its
    figure, under the name reports have always printed)."""

    scope: str
    metric: str
    fused: float
    best_channel: str
    channel: float
    worst_fold_gap_queries: float  # most queries' worth the hybrid ranking trails by in any fold

    @property
    def holds(self) -> bool:
        return self.fused >= self.channel - 1e-9 and self.worst_fold_gap_queries <= 1.0 + 1e-9

    def as_dict(self) -> dict[str, object]:
        return self.__dict__ | {"holds": self.holds}


def floor_checks(
    scores: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]], groups: list[list[str]]
) -> list[FloorCheck]:
    """``scores[method][scope][query][metric]``: the channel floor for every scope and metric."""
    checks = []
    for scope in scores[HYBRID]:
        for metric in METRICS:
            pooled = {m: _mean([v[metric] for v in scores[m][scope].values()]) for m in (HYBRID, *CHANNELS)}
            best = max(CHANNELS, key=lambda m: pooled[m])
            gap = 0.0
            for group in groups:
                hybrid = sum(scores[HYBRID][scope][q][metric] for q in group)
                channel = sum(scores[best][scope][q][metric] for q in group)
                gap = max(gap, channel - hybrid)
            checks.append(
                FloorCheck(
                    scope, metric, round(pooled[HYBRID], 4), best, round(pooled[best], 4), round(gap, 3)
                )
            )
    return checks


def paired_bootstrap(
    a: Mapping[str, float], b: Mapping[str, float], *, samples: int = BOOTSTRAP_SAMPLES
) -> dict[str, float]:
    """Mean of ``a - b`` over the shared queries and its 95% percentile interval (queries resampled)."""
    queries = sorted(set(a) & set(b))
    diffs = [a[q] - b[q] for q in queries]
    if not diffs:
        return {"diff": 0.0, "low": 0.0, "high": 0.0}
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(diffs)
    means = sorted(_mean([diffs[rng.randrange(n)] for _ in range(n)]) for _ in range(samples))
    return {
        "diff": round(_mean(diffs), 4),
        "low": round(means[int(0.025 * samples)], 4),
        "high": round(means[int(0.975 * samples) - 1], 4),
    }


def bootstrap_table(
    scores: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
    baselines: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
) -> list[dict[str, object]]:
    """The hybrid ranking against each baseline (a channel of this run, or a saved run), per scope, metric."""
    rows: list[dict[str, object]] = []
    for name, baseline in baselines.items():
        for scope in scores[HYBRID]:
            for metric in METRICS:
                a = {q: v[metric] for q, v in scores[HYBRID][scope].items()}
                b = {q: v[metric] for q, v in baseline[scope].items()}
                row: dict[str, object] = {"against": name, "scope": scope, "metric": metric}
                rows.append(row | paired_bootstrap(a, b))
    return rows


def misses(
    rankings: Mapping[str, Mapping[str, Rankings]], qrels: Qrels, *, k: int = 10
) -> list[dict[str, object]]:
    """Queries where the hybrid ranking finds the first relevant record later than a channel, or never."""
    rows: list[dict[str, object]] = []
    for scope in rankings[HYBRID]:
        for query in scored_queries(qrels):
            grades = judged(qrels, query)
            ranks = {m: first_relevant(rankings[m][scope].get(query, ()), grades, k) for m in rankings}
            hybrid = ranks[HYBRID]
            behind = [m for m in CHANNELS if ranks.get(m) and (hybrid is None or hybrid > (ranks[m] or 0))]
            if hybrid is None or behind:
                rows.append({"scope": scope, "query": query, "first_relevant": ranks})
    return rows


def fold_groups(qrels: Qrels) -> dict[str, list[list[str]]]:
    queries = scored_queries(qrels)
    return {"folds": folds(queries, 5), "halves": folds(queries, 2)}


Scores = dict[str, dict[str, dict[str, dict[str, float]]]]  # method -> scope -> query -> metric -> value


class BaselineError(ValueError):
    """A saved run that cannot be compared with this one."""


def read_saved(path: Path) -> object:
    """A saved run's ``--json``, or the reason it cannot be read as one."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{path.name} is not readable JSON ({exc})") from None


def saved_hybrid(data: object, name: str) -> dict[str, dict[str, list[str]]]:
    """The hybrid rankings of a saved ``bench retrieval --json`` (scope -> query -> documents)."""
    hybrid = data.get("rankings", {}).get(HYBRID) if isinstance(data, dict) else None
    if not isinstance(hybrid, dict) or not hybrid:
        raise BaselineError(f"{name} holds no hybrid rankings: give the --json of a bench retrieval run")
    if not all(
        isinstance(scope, dict)
        and all(isinstance(docs, list) and all(isinstance(d, str) for d in docs) for docs in scope.values())
        for scope in hybrid.values()
    ):
        raise BaselineError(f"{name}: its hybrid rankings are not lists of document ids per query")
    return hybrid


def check_baseline(baseline: Mapping[str, Rankings], qrels: Qrels, name: str) -> None:
    """A saved run must have ranked every query scored here, or the comparison would read a query it never
    ranked as a miss."""
    scored = set(scored_queries(qrels))
    for scope, ranked in baseline.items():
        missing = scored - set(ranked)
        if missing:
            raise BaselineError(
                f"{name} did not rank {len(missing)} of the {len(scored)} scored queries ({scope}, e.g. "
                f"{sorted(missing)[0]}): is it a run of the same corpus?"
            )


def report(
    rankings: Mapping[str, Mapping[str, Rankings]],
    qrels: Qrels,
    *,
    bootstrap: bool = False,
    baseline: Mapping[str, Rankings] | None = None,
) -> dict[str, object]:
    """Folds, halves, the channel floor, misses and (when asked) bootstrap intervals, as JSON-ready data.

    ``baseline`` is the hybrid ranking of another run (``--json`` of an earlier commit), compared query
    by query as "previous hybrid".
    """
    scores: Scores = {
        m: {s: per_query(r, qrels) for s, r in scopes.items()} for m, scopes in rankings.items()
    }
    groups = fold_groups(qrels)
    out: dict[str, object] = {
        split: {m: {s: by_fold(v, g) for s, v in scopes.items()} for m, scopes in scores.items()}
        for split, g in groups.items()
    }
    out["floor"] = [c.as_dict() for c in floor_checks(scores, groups["folds"])]
    out["misses"] = misses(rankings, qrels)
    if bootstrap:
        against: Scores = {m: s for m, s in scores.items() if m != HYBRID}
        if baseline is not None:
            against["previous hybrid"] = {s: per_query(r, qrels) for s, r in baseline.items()}
        out["bootstrap"] = bootstrap_table(scores, against)
    return out


def markdown(data: Mapping[str, object]) -> str:
    """The protocol's figures for people: folds, halves, floor, bootstrap, misses."""
    lines: list[str] = []
    for split in ("folds", "halves"):
        table = data[split]
        assert isinstance(table, dict)
        lines += ["", f"{split} ({' | '.join(METRICS)} per {split[:-1]})", ""]
        for method, scopes in table.items():
            for scope, rows in scopes.items():
                cells = "  ".join("/".join(f"{row[m]:.3f}" for m in METRICS) for row in rows)
                lines.append(f"- {method} {scope}: {cells}")
    lines += ["", "| scope | metric | hybrid | better channel | channel | worst fold gap (queries) | holds |"]
    lines.append("|---|---|---|---|---|---|---|")
    for c in data["floor"]:  # type: ignore[attr-defined]
        lines.append(
            f"| {c['scope']} | {c['metric']} | {c['fused']:.3f} | {c['best_channel']} | {c['channel']:.3f} "
            f"| {c['worst_fold_gap_queries']:g} | {'yes' if c['holds'] else 'NO'} |"
        )
    if "bootstrap" in data:
        lines += [
            "",
            "| hybrid against | scope | metric | mean diff | 95% interval |",
            "|---|---|---|---|---|",
        ]
        for r in data["bootstrap"]:  # type: ignore[attr-defined]
            lines.append(
                f"| {r['against']} | {r['scope']} | {r['metric']} | {r['diff']:+.3f} "
                f"| [{r['low']:+.3f}, {r['high']:+.3f}] |"
            )
    lines += ["", "Misses (first relevant rank per method; - = not in the top 10):"]
    for miss in data["misses"]:  # type: ignore[attr-defined]
        ranks = ", ".join(f"{m} {r if r else '-'}" for m, r in miss["first_relevant"].items())
        lines.append(f"- {miss['scope']} {miss['query']}: {ranks}")
    return "\n".join(lines)
