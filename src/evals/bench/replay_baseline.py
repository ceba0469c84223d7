"""A replay against an earlier run of the same stream: what a change did, incident by incident.

A change to ranking or confidence is adopted only when it holds on both halves of the stream
(docs/evals.md). ``bench replay --baseline RUN.json`` reads the per-incident rows of an earlier
``--json`` (the code before the change) and gives, for each system in both runs, the paired bootstrap
of this run minus that one over the stream and over each half, the incidents whose first precedent it
gained or lost, and whether any figure is worse on either half. The halves are this run's; an incident
pairs with its own row in the earlier run, so the two must have replayed the same stream.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.bench.protocol import BaselineError, paired_bootstrap, read_saved
from evals.bench.replay import HALVES, METRICS, NO_INTERVAL, Scored, difference, per_incident, windows

SPANS = ("stream", "first half", "second half")


def load_rows(path: Path) -> dict[str, list[Scored]]:
    """Each system's per-incident rows of a saved run."""
    return rows_of(read_saved(path), path.name)


def rows_of(report: object, name: str = "the run") -> dict[str, list[Scored]]:
    """Each system's per-incident rows of a replay's report (its ``rows``)."""
    systems = report.get("rows") if isinstance(report, dict) else None
    if not isinstance(systems, dict) or not systems:
        raise BaselineError(
            f"{name} holds no per-incident rows: give the --json of a replay (one made before rows "
            "were saved cannot be compared)"
        )
    try:
        return {str(system): [Scored.from_row(r) for r in rows] for system, rows in systems.items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"{name}: a row is not a replayed incident (missing or bad {exc})") from None


def compare(now: Mapping[str, Sequence[Scored]], before: Mapping[str, Sequence[Scored]]) -> dict[str, Any]:
    """This run minus the earlier one, for every system both replayed."""
    shared = {r.incident for rows in now.values() for r in rows} & {
        r.incident for rows in before.values() for r in rows
    }
    if not shared:
        raise BaselineError("the baseline replayed none of these incidents: is it the same stream?")
    intervals: list[dict[str, Any]] = []
    first: dict[str, dict[str, list[str]]] = {}
    for system in [name for name in now if name in before]:
        previous = {r.incident: r for r in before[system]}
        halves = windows(now[system], HALVES)
        for span, rows in zip(SPANS, (now[system], *halves), strict=True):
            old = [previous[r.incident] for r in rows if r.incident in previous]
            for metric in METRICS:
                a, b = per_incident(rows, metric), per_incident(old, metric)
                diff = paired_bootstrap(a, b) if set(a) & set(b) else NO_INTERVAL
                intervals.append({"system": system, "span": span, "metric": metric} | diff)
        paired = [(r, previous[r.incident]) for r in now[system] if r.incident in previous]
        first[system] = {
            "gained": [r.incident for r, old in paired if r.top1 and not old.top1],
            "lost": [r.incident for r, old in paired if old.top1 and not r.top1],
        }
    worse = {
        system: sorted(
            f"{r['metric']} on the {r['span']}"
            for r in intervals
            if r["system"] == system and r["span"] != "stream" and (r["diff"] or 0.0) < 0
        )
        for system in first
    }
    return {
        "incidents": len(shared),
        "intervals": intervals,
        "first_precedent": first,
        "worse_on_a_half": worse,
    }


def markdown(comparison: Mapping[str, Any], name: str) -> str:
    """The comparison as a table, then each system's gains, losses and the halves' verdict."""
    lines = [
        "",
        f"Against {name} ({comparison['incidents']} incidents in both; this run minus that one, mean "
        "and 95% interval):",
        "",
        "| system | span | " + " | ".join(METRICS) + " |",
        "|---|---|" + "---|" * len(METRICS),
    ]
    cells: dict[tuple[str, str], list[str]] = {}
    for r in comparison["intervals"]:
        cells.setdefault((r["system"], r["span"]), []).append(difference(r, " "))
    lines += [f"| {system} | {span} | " + " | ".join(row) + " |" for (system, span), row in cells.items()]
    lines.append("")
    for system, changed in comparison["first_precedent"].items():
        worse = comparison["worse_on_a_half"][system]
        lines.append(
            f"- {system}: first precedent gained {', '.join(changed['gained']) or 'nowhere'}, "
            f"lost {', '.join(changed['lost']) or 'nowhere'}; "
            + (f"worse on a half: {'; '.join(worse)}" if worse else "no figure worse on either half")
        )
    return "\n".join(lines)
