"""The project's scenarios as a replay stream (``recallops bench replay --scenarios``).

Each scenario's alert is an incident of the stream, delivered to the product's own intake (its source's
webhook, in a throwaway RecallOps) and briefed as the agent is told of it, at the time it fired (its
source's time, else its arrival). The history is the records the scenarios load, each imported at its
own date: the Meridian record sets and records (one team's memory, its generated distractors
included) and, in a second segment with a memory of its own, the project's demo history, some of it
dated after the alerts that state a time. The alerts leave nothing in memory (they have no
post-mortem), so an incident sees the records dated before it and no other alert. Corrections are not
replayed.

The judgments are what the scenarios state: the records a scenario expects recalled are relevant to
it, and records one scenario expects together are one failure mode, so a scenario expecting one of
them counts the others as relevant too. Every other record is not relevant; a scenario that expects
nothing says no precedent exists. Its briefing is graded against the precedents it expects (and the
root cause of its own post-mortem when it has one). The two cold-start scenarios are left out: their
"no precedent" is about a memory that is empty or off.
"""

import asyncio
import dataclasses
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent.core.evidence import AlertInput
from agent.resolution.grading import PostMortem
from evals.bench.replay import Incident, Recorded, Segment, replay
from evals.bench.scenario_pairs import expected
from evals.scenarios.runner import deliver, opened_alert
from evals.scenarios.scenario import Scenario, load_scenarios, records_for
from web.app.container import Container
from web.app.history import load_seeds, retain_runbooks
from web.app.sandbox import sandbox_settings

STATED = 2  # the judgment grade of a record a scenario expects


def replayable(scenario: Scenario) -> bool:
    """A scenario briefed from a history: memory on, and records or the demo history in it."""
    memory = scenario.memory
    return memory.enabled and bool(memory.seeds or memory.record_sets or memory.records)


def failure_modes(scenarios: Sequence[Scenario]) -> dict[str, frozenset[str]]:
    """Each expected record's failure mode: the records some scenario expects together, joined
    transitively (a recurrence expects the first occurrence and the recurrence)."""
    parent: dict[str, str] = {}

    def root(record: str) -> str:
        while parent.setdefault(record, record) != record:
            record = parent[record]
        return record

    for scenario in scenarios:
        for record in expected(scenario):
            parent[root(record)] = root(expected(scenario)[0])
    modes: dict[str, set[str]] = {}
    for record in list(parent):
        modes.setdefault(root(record), set()).add(record)
    return {record: frozenset(modes[root(record)]) for record in parent}


def judgments(scenario: Scenario, modes: dict[str, frozenset[str]]) -> dict[str, int]:
    """The records relevant to the scenario's alert: those it expects and their failure modes."""
    return {record: STATED for wanted in expected(scenario) for record in modes[wanted]}


def history_rows(scenarios: Sequence[Scenario], directory: Path) -> list[dict[str, Any]]:
    """The records the scenarios load (the demo history's among them when one asks for it), once each."""
    rows: dict[str, dict[str, Any]] = {}
    if any(s.memory.seeds for s in scenarios):
        rows |= {row.incident_id: row.model_dump(mode="json") for _, row in load_seeds().rows}
    rows |= {r.incident_id: r.model_dump(mode="json") for s in scenarios for r in records_for(s, directory)}
    return list(rows.values())


def _when(row: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(str(row["timestamp"]))


def in_time_order(
    rows: Sequence[dict[str, Any]], incidents: Sequence[tuple[Incident, datetime]]
) -> list[Incident | Recorded]:
    """History and incidents merged by time (a record dated at an alert's very time counts as after
    it), the records between two incidents imported together."""
    timeline: list[tuple[datetime, int, Incident | dict[str, Any]]] = [(_when(r), 1, r) for r in rows]
    timeline += [(fired, 0, incident) for incident, fired in incidents]
    events: list[Incident | Recorded] = []
    for _, _, item in sorted(timeline, key=lambda t: (t[0], t[1])):
        if isinstance(item, Incident):
            events.append(item)
        elif events and isinstance(events[-1], Recorded):
            events[-1].rows.append(item)
        else:
            events.append(Recorded([item]))
    return events


async def _runbooks(container: Container) -> None:
    await retain_runbooks(container.bank, (await asyncio.to_thread(load_seeds)).runbooks)


async def alert_of(scenario: Scenario, workdir: Path) -> tuple[AlertInput, datetime]:
    """The scenario's alert as the product's intake stores it, and when it fired."""
    container = await asyncio.to_thread(Container.build, sandbox_settings(workdir))
    try:
        rejected = await deliver(container, scenario)
        found = opened_alert(container)
    finally:
        await container.aclose()
    if found is None:
        raise ValueError(f"scenario {scenario.id}: its alert opened no incident ({'; '.join(rejected)})")
    alert, fired = found
    return dataclasses.replace(alert, incident_id=scenario.id), fired


def incident_of(scenario: Scenario, alert: AlertInput, modes: dict[str, frozenset[str]]) -> Incident:
    """The scenario as an incident of the stream; it leaves nothing in memory."""
    relevant = judgments(scenario, modes)
    cause = str(scenario.resolve.model_dump()["root_cause"]) if scenario.resolve else ""
    truth = PostMortem(root_cause=cause, precedents=frozenset(relevant))
    return Incident(scenario.id, alert, relevant, truth)


async def scenario_segments(directory: Path, workdir: Path | None = None) -> list[Segment]:
    """The replayable scenarios as segments, one per history (the records, the demo history), each in
    time order."""
    scenarios = load_scenarios(directory)
    modes = failure_modes(scenarios)
    groups: dict[bool, list[Scenario]] = {}
    for scenario in filter(replayable, scenarios):
        groups.setdefault(scenario.memory.seeds, []).append(scenario)
    segments = []
    with tempfile.TemporaryDirectory(prefix="recallops-scenario-alerts-", dir=workdir) as tmp:
        for seeds, group in groups.items():
            incidents = []
            for scenario in group:
                alert, fired = await alert_of(scenario, Path(tmp) / scenario.id)
                incidents.append((incident_of(scenario, alert, modes), fired))
            events = in_time_order(history_rows(group, directory), incidents)
            segments.append(Segment(events, _runbooks if seeds else None))
    return segments


async def scenario_replay(
    directory: Path, *, workdir: Path | None = None, progress: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """``bench replay`` over the scenarios of ``directory``; a ``ValueError`` when none has a history
    to replay."""
    segments = await scenario_segments(directory, workdir)
    if not any(s.incidents for s in segments):
        raise ValueError(f"no scenario in {directory} has a history to replay (records or the demo history)")
    return await replay(segments, workdir=workdir, progress=progress)
