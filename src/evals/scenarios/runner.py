"""Run evaluation scenarios through the real product: intake over HTTP, the worker's briefing, replay.

Each scenario gets a fresh RecallOps in a temporary directory (database and embedded memory). Its
history goes in through the import flow (and corrections through the resolution service and the
memory outbox), its alert is posted to the source's webhook route with a real token, the briefing
is made by the worker's own task, and the same incident is replayed with memory off and on. Nothing
here is a double: a scenario fails when the product does.
"""

import asyncio
import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import httpx
from sqlalchemy import func, select

from agent.briefing.replay import Replay, replay
from agent.core.evidence import AlertInput
from agent.core.schema import EvidenceItem
from evals.scenarios.faithfulness import Faithfulness, Finding, Source, check
from evals.scenarios.scenario import ResolveIn, Scenario, records_for
from evals.scenarios.scoring import Observation, plain, score
from incidents.auth.tokens import create_token
from incidents.briefings.models import Briefing as StoredBriefing
from incidents.database import transaction
from incidents.grades import service as grade_service
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.resolution import service as resolution_service
from incidents.resolution.models import ResolutionFields
from incidents.resolution.service import add_correction
from web.app.agent import alert_for_incident, open_agent
from web.app.briefings import briefing_task, load_alert
from web.app.container import Container
from web.app.grading import grade_incident
from web.app.history import import_history, load_seeds, retain_runbooks
from web.app.memory_outbox import deliver_due
from web.app.sandbox import import_records, sandbox_settings
from web.http.app import create_app

log = logging.getLogger(__name__)

Mode = Literal["evidence-only", "llm"]
PATHS = {
    "alertmanager": "/api/v1/alerts/alertmanager",
    "grafana": "/api/v1/alerts/grafana",
    "pagerduty": "/v2/enqueue",
    "generic": "/api/v1/alerts",
}
HISTORY = ("seed", "import")
MAX_DRAIN = 50


@dataclass(frozen=True)
class MemoryEffect:
    """What memory changed, replaying the scenario's incident with memory off and then on."""

    top_cause_changed: bool
    risky_actions_changed: bool
    related_added: list[str]

    @property
    def changed(self) -> bool:
        return self.top_cause_changed or self.risky_actions_changed


@dataclass
class ScenarioResult:
    id: str
    title: str
    kinds: list[str]
    mode: Mode
    failures: list[str]
    known_gap: str = ""
    briefing: dict[str, Any] | None = None
    faithfulness: Faithfulness = field(default_factory=Faithfulness)
    memory_effect: MemoryEffect | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures and self.error is None and not self.known_gap

    @property
    def gap(self) -> bool:
        """A known gap that still fails as recorded: reported, not counted as a failure."""
        return bool(self.known_gap) and bool(self.failures) and self.error is None


def sources_of(briefing: dict[str, Any]) -> list[Source]:
    """The evidence list as the faithfulness checker reads it: number, record id, title and text."""
    out = []
    for raw in briefing.get("evidence") or []:
        item = EvidenceItem.model_validate(raw)
        out.append(Source(item.n, item.id or item.kind, f"{item.title}\n{item.text}"))
    return out


def alert_text(briefing: dict[str, Any]) -> str:
    return "\n".join(
        f"{e['title']}\n{e['text']}" for e in briefing.get("evidence") or [] if e["kind"] == "alert"
    )


def memory_effect(result: Replay) -> MemoryEffect:
    off, on = result.memory_off, result.memory_on
    top_off = plain(off.likely_causes[0].text) if off.likely_causes else ""
    top_on = plain(on.likely_causes[0].text) if on.likely_causes else ""
    return MemoryEffect(
        top_cause_changed=top_off != top_on,
        risky_actions_changed=bool(result.diff.risky_actions.added or result.diff.risky_actions.removed),
        related_added=list(result.diff.related_incidents.added),
    )


def _unfaithful(finding: Finding) -> str:
    """Every faithfulness finding fails the scenario, in either mode: a claim no cited source backs is
    as wrong as a planted string outside its record."""
    where = f"{finding.section} item {finding.index + 1}"
    if finding.check == "canary":
        return f"canary {finding.detail} in {finding.section} without its record"
    if finding.check == "supported":
        backing = "is in none of its cited sources nor the alert"
        return f"unsupported claim in {where}: {finding.detail!r} {backing}"
    if finding.check == "in_range":
        return f"{where} cites {finding.detail}, which is not in the evidence list"
    return f"{where} carries no citation: {finding.detail!r}"


async def _load_memory(container: Container, scenario: Scenario, directory: Path) -> None:
    if scenario.memory.seeds:
        seeds = await asyncio.to_thread(load_seeds)
        summary = await import_history(
            sessions=container.sessions, bank=container.bank, rows=seeds.rows, origin="seed", actor="eval"
        )
        if summary.rejected:
            raise RuntimeError(f"seeds rejected: {summary.rejected}")
        await retain_runbooks(container.bank, seeds.runbooks)
    records = records_for(scenario, directory)
    if records:
        await import_records(container, [r.model_dump(mode="json") for r in records], actor="eval")
    for correction in scenario.memory.corrections:
        with transaction(container.sessions) as db:
            incident = incidents.get_by_public_id(db_session=db, public_id=correction.incident_id)
            if incident is None:
                raise RuntimeError(f"correction names an unknown incident {correction.incident_id}")
            add_correction(db_session=db, incident=incident, text=correction.text, actor=correction.author)
            db.commit()
    for _ in range(MAX_DRAIN):
        if not (await deliver_due(container)).attempted:
            break


async def deliver(container: Container, scenario: Scenario) -> list[str]:
    """Post the alert as its source would, as many times as the scenario says; rejections as text."""
    with transaction(container.sessions) as db:
        secret = create_token(db_session=db, name="eval-sender", scopes=["alerts:write"]).secret
        db.commit()
    app = create_app(container.settings)
    app.state.container = container
    rejected = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://recallops.eval") as client:
        for _ in range(scenario.alert.deliveries):
            response = await client.post(
                PATHS[scenario.alert.source],
                json=scenario.alert.payload,
                headers={"Authorization": f"Bearer {secret}"},
            )
            if response.status_code >= 300:
                rejected.append(f"{response.status_code} {response.text[:300]}")
    return rejected


def opened(container: Container) -> tuple[list[int], int]:
    """The incidents the scenario's alert opened (not its history), and how many briefings they have."""
    with container.sessions() as db:
        ids = list(
            db.scalars(select(Incident.id).where(Incident.origin.not_in(HISTORY)).order_by(Incident.id))
        )
        stored = db.scalar(select(func.count(StoredBriefing.id)).where(StoredBriefing.incident_id.in_(ids)))
        return ids, int(stored or 0)


def opened_alert(container: Container) -> tuple[AlertInput, datetime] | None:
    """The first incident the scenario's alert opened, as the agent is told of it, and when it fired
    (its source's time, else its arrival)."""
    ids, _ = opened(container)
    if not ids:
        return None
    with container.sessions() as db:
        incident = db.get(Incident, ids[0])
        return (
            (alert_for_incident(db_session=db, incident=incident), incident.first_seen) if incident else None
        )


def _latest_briefing(container: Container, incident_id: int) -> dict[str, Any] | None:
    with container.sessions() as db:
        row = db.scalars(
            select(StoredBriefing)
            .where(StoredBriefing.incident_id == incident_id)
            .order_by(StoredBriefing.version.desc())
        ).first()
        return dict(row.data) if row is not None else None


async def _documents(container: Container) -> int:
    return (await container.bank.health()).documents or 0


class MemoryTemplates:
    """Prepared memory states, copied into each scenario's sandbox instead of re-imported every time.

    Scenarios that share a history (most share the Meridian record set) import it once; the copy is
    the same database and memory file the import produced, so nothing about the run changes.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._ready: dict[str, Path] = {}

    async def materialize(self, scenario: Scenario, directory: Path, target: Path) -> None:
        spec = scenario.memory.model_dump_json(exclude={"enabled"}) + str(directory)
        template = self._ready.get(spec)
        if template is None:
            template = self.root / f"memory-{len(self._ready)}"
            container = await asyncio.to_thread(Container.build, sandbox_settings(template))
            try:
                await _load_memory(container, scenario, directory)
            finally:
                await container.aclose()
            self._ready[spec] = template
        await asyncio.to_thread(shutil.copytree, template, target)


async def run_scenario(
    scenario: Scenario,
    directory: Path,
    *,
    mode: Mode,
    templates: MemoryTemplates | None = None,
    workdir: Path | None = None,
) -> ScenarioResult:
    """One scenario in its own sandbox; an exception is reported as the scenario's error, not raised."""
    result = ScenarioResult(
        scenario.id, scenario.title, scenario.kinds, mode, failures=[], known_gap=scenario.known_gap
    )
    with tempfile.TemporaryDirectory(prefix="recallops-eval-", dir=workdir) as tmp:
        data_dir = Path(tmp) / "data"
        llm: Literal["evidence-only", "llm"] = "evidence-only" if mode == "evidence-only" else "llm"
        try:
            if templates is not None:
                await templates.materialize(scenario, directory, data_dir)
            container = await asyncio.to_thread(Container.build, sandbox_settings(data_dir, llm=llm))
        except Exception as exc:
            log.exception("scenario memory could not be prepared", extra={"scenario": scenario.id})
            result.error = f"{type(exc).__name__}: {exc}"
            return result
        try:
            if templates is None:
                await _load_memory(container, scenario, directory)
            await _run(container, scenario, result)
        except Exception as exc:
            log.exception("scenario failed to run", extra={"scenario": scenario.id})
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            await container.aclose()
    return result


async def _run(container: Container, scenario: Scenario, result: ScenarioResult) -> None:
    before = await _documents(container)
    rejected = await deliver(container, scenario)
    task = briefing_task(container)
    for _ in range(MAX_DRAIN):
        if not await task():
            break
    opened_ids, stored = opened(container)
    if not opened_ids:
        result.failures = [*rejected, "no incident was opened"] if rejected else ["no incident was opened"]
        return
    alert = load_alert(container, opened_ids[0])
    assert alert is not None
    async with open_agent(container) as agent:
        replayed = await replay(agent, alert)
    result.memory_effect = memory_effect(replayed)
    if scenario.memory.enabled:
        briefing = _latest_briefing(container, opened_ids[0])
        if briefing is None:
            result.failures = ["the worker stored no briefing"]
            return
    else:
        briefing = replayed.memory_off.model_dump(mode="json")
    result.briefing = briefing
    result.faithfulness = check(
        briefing, sources_of(briefing), alert_text(briefing), scenario.expect.canaries
    )
    seen = Observation(
        briefing=briefing,
        incidents=len(opened_ids),
        briefings=stored,
        memory_writes=await _documents(container) - before,
        rejected=rejected,
    )
    result.failures = score(scenario.expect, seen)
    result.failures += [_unfaithful(f) for f in result.faithfulness.findings]
    if result.known_gap and not result.failures:
        result.known_gap = ""
        result.failures = ["this known gap passes now: remove its known_gap mark"]
    if scenario.resolve is not None:
        result.failures += await _resolve_and_grade(container, opened_ids[0], scenario.resolve)


async def _resolve_and_grade(container: Container, incident_id: int, post_mortem: ResolveIn) -> list[str]:
    """Resolve the incident as an engineer would and check the grade its stored briefing gets."""
    fields = ResolutionFields.model_validate(post_mortem.model_dump(exclude={"grade"}))
    with transaction(container.sessions) as db:
        incident = db.get(Incident, incident_id)
        assert incident is not None
        resolution_service.resolve(db_session=db, incident=incident, fields=fields, actor="eval")
        db.commit()
    await asyncio.to_thread(grade_incident, container, incident_id)
    with container.sessions() as db:
        stored = grade_service.incident_grades(db_session=db, incident_id=incident_id)
    if not stored:
        return ["resolving stored no briefing grade"]
    return [
        f"briefing v{g.version} graded {g.score}, expected {post_mortem.grade} ({g.reason})"
        for g in stored
        if g.score != post_mortem.grade
    ]
