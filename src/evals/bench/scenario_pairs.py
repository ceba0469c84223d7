"""Labelled pairs from the project's own scenarios, the second source of ``bench calibration``.

The dev split alone cannot teach the confidence what a clear precedent looks like: its judgments grade
a record relevant only with an overlapping service and a shared root-cause label, so its best matches
are relevant about half the time, whatever they say. The scenarios are the other half of the picture:
each names the records it expects recalled (``in_top`` and ``top1``), over a history built around
distractors (the Meridian set, 300 generated same-service records, the demo seeds).

Each scenario with memory runs as far as the worker's recall: its history is imported and its alert
posted exactly as ``recallops eval`` does (``evals.scenarios.runner``), then the briefed alert is
recalled the way the benchmark recalls a dev query (ten results, scoped to its service and across all
services). A pair is relevant when the scenario expects that record; every other record it recalls
counts as not relevant, since the scenario is written so that they are the distractors.

Scenarios that expect the same precedents (the same pool alert redelivered, injected, corrected) are
near-duplicates, so they share one group: held-out folds keep a group together, and no scenario is
scored by a fit that saw its twin.
"""

import asyncio
import tempfile
from pathlib import Path

from agent.core.confidence import features, same_scope
from agent.core.evidence import incident_service, is_precedent
from agent.core.tools import recall_past_lookalikes
from evals.bench.calibration import Pair
from evals.bench.retrieval import DEPTH
from evals.scenarios.runner import MemoryTemplates, deliver, opened_alert
from evals.scenarios.scenario import Scenario, load_scenarios
from web.app.container import Container
from web.app.sandbox import sandbox_settings

SOURCE = "scenarios"


def expected(scenario: Scenario) -> list[str]:
    """The records a scenario expects recalled."""
    wanted = [*scenario.expect.in_top, *([scenario.expect.top1] if scenario.expect.top1 else [])]
    return sorted(set(wanted))


def group(scenario: Scenario) -> str:
    """The fold group: scenarios expecting the same records go together."""
    return f"{SOURCE}:{','.join(expected(scenario)) or scenario.id}"


async def _pairs_of(scenario: Scenario, container: Container) -> list[Pair]:
    await deliver(container, scenario)
    stored = opened_alert(container)
    if stored is None:
        return []
    alert, _ = stored
    relevant = set(expected(scenario))
    pairs: list[Pair] = []
    scopes = [("scoped", alert.service), ("unscoped", None)] if alert.service else [("unscoped", None)]
    for scope, service in scopes:
        text = alert.description
        found = await recall_past_lookalikes(container.bank, text, text, service, DEPTH)
        for incident in found:
            if not is_precedent(incident):
                continue
            same = same_scope(alert.service, incident_service(incident))
            values = features(incident, alert.description, same_service=same, alertname=alert.alertname)
            pairs.append(
                Pair(group(scenario), incident.id, scope, values, incident.id in relevant, source=SOURCE)
            )
    return pairs


async def scenario_pairs(directory: Path, workdir: Path | None = None) -> list[Pair]:
    """Every scenario's pairs (those with memory on and a history), in scenario order."""
    pairs: list[Pair] = []
    with tempfile.TemporaryDirectory(prefix="recallops-calibration-", dir=workdir) as tmp:
        templates = MemoryTemplates(Path(tmp) / "templates")
        for n, scenario in enumerate(load_scenarios(directory)):
            if not scenario.memory.enabled:
                continue
            data_dir = Path(tmp) / f"scenario-{n}"
            await templates.materialize(scenario, directory, data_dir)
            container = await asyncio.to_thread(Container.build, sandbox_settings(data_dir))
            try:
                pairs += await _pairs_of(scenario, container)
            finally:
                await container.aclose()
    return pairs
