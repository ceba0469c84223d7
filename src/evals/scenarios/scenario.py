"""Evaluation scenarios as data: what memory holds, the alert as its source sent it, what must follow.

A scenario file is YAML. Shared record sets live beside the scenarios under ``records/`` and are pulled
in by name, so twenty scenarios can share one realistic history without copying it; a bank of
generated same-service distractors (``distractors-<n>``) is pulled in the same way.
"""

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.distractors import generated_set
from memory.template import FIELDS, POST_MORTEM, TemplateField, model_of

Source = Literal["alertmanager", "grafana", "pagerduty", "generic"]
Section = Literal["summary", "likely_causes", "first_checks", "suggested_fix", "risky_actions"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _plain(field: TemplateField, *, optional: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """A template field as a scenario file spells it: required where a post-mortem requires it,
    unless named ``optional``."""
    kind = datetime if field.kind == "time" else str
    return (kind, ...) if field.required and field.name not in optional else (kind, "")


class _Record(_Strict):
    incident_id: str
    service: str


if TYPE_CHECKING:
    RecordIn = _Record
else:
    # A record may leave its outcome out: what recall and the verbatim checks read is the rest.
    RecordIn = model_of(
        "RecordIn",
        _Record,
        "A historical incident in the labeled template's fields, imported like any post-mortem.",
        {field.name: _plain(field, optional=("outcome",)) for field in FIELDS},
    )


class CorrectionIn(_Strict):
    """An engineer's later correction of a remembered incident's root cause."""

    incident_id: str
    text: str
    author: str = "eval"


class MemoryState(_Strict):
    """``enabled: false`` briefs with memory off; otherwise the bank holds exactly these records."""

    enabled: bool = True
    seeds: bool = False  # the project's demo history, loaded the way ``recallops seed`` loads it
    record_sets: list[str] = Field(default_factory=list)
    records: list[RecordIn] = Field(default_factory=list)
    corrections: list[CorrectionIn] = Field(default_factory=list)


class AlertIn(_Strict):
    source: Source
    payload: dict[str, Any]
    deliveries: int = Field(default=1, ge=1, le=5)


class TextExpectation(_Strict):
    """Case-insensitive substrings that must (or must not) appear in one briefing section."""

    section: Section
    contains: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    first: bool = False  # ``contains`` must hold for the section's first item alone


class Expect(_Strict):
    top_k: int = Field(default=3, ge=1, le=10)
    in_top: list[str] = Field(default_factory=list)
    not_in_top: list[str] = Field(default_factory=list)
    top1: str | None = None
    text: list[TextExpectation] = Field(default_factory=list)
    seen_before: Literal["recurring", "similar", "novel"] | None = None
    no_prior: bool = False  # says plainly no prior incident is known and cites no record
    flagged: bool = False  # a warning says the input tried to instruct the model
    incidents: int = 1
    briefings: int = 1
    canaries: dict[str, str] = Field(default_factory=dict)  # planted string -> the record that holds it


class _Resolve(_Strict):
    grade: Literal[100, 65, 35, 0]


if TYPE_CHECKING:
    ResolveIn = _Resolve
else:
    ResolveIn = model_of(
        "ResolveIn",
        _Resolve,
        "The post-mortem an engineer resolves the scenario's incident with, and the grade its "
        "briefing must then get (100 / 65 / 35 / 0).",
        {field.name: _plain(field) for field in POST_MORTEM},
    )


class Scenario(_Strict):
    """``known_gap`` says why the product fails this scenario today: it still runs and its failures
    are reported, but it does not fail the suite until it passes, and then it must lose the mark."""

    id: str
    title: str
    kinds: list[str] = Field(default_factory=list)
    known_gap: str = ""
    memory: MemoryState = Field(default_factory=MemoryState)
    alert: AlertIn
    expect: Expect
    resolve: ResolveIn | None = None

    @model_validator(mode="after")
    def _coherent(self) -> "Scenario":
        if self.expect.no_prior and (self.expect.in_top or self.expect.top1):
            raise ValueError("a cold-start scenario cannot also expect recalled incidents")
        return self


def load_record_set(directory: Path, name: str) -> list[RecordIn]:
    """A file under ``records/`` of the scenarios' directory, else of the shipped scenarios (held-out
    scenarios are written against the shipped histories, Meridian's year of post-mortems), or a
    generated set (``distractors-<n>``, see ``distractors.py``)."""
    generated = generated_set(name)
    if generated is not None:
        return [RecordIn.model_validate(item) for item in generated]
    places = [directory / "records" / f"{name}.yaml", DEFAULT_SCENARIOS / "records" / f"{name}.yaml"]
    path = next((p for p in places if p.is_file()), None)
    if path is None:
        raise ValueError(f"record set {name!r} not found: no {places[0]}, and none shipped by that name")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [RecordIn.model_validate(item) for item in data["records"]]


def load_scenarios(directory: Path) -> list[Scenario]:
    """Every ``*.yaml`` directly in ``directory``, sorted by file name; a bad file fails loudly."""
    scenarios = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            scenarios.append(Scenario.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))))
        except Exception as exc:
            raise ValueError(f"{path.name}: {exc}") from exc
    ids = [s.id for s in scenarios]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate scenario ids: {', '.join(duplicates)}")
    return scenarios


def records_for(scenario: Scenario, directory: Path) -> list[RecordIn]:
    """The inline records plus the named record sets, inline ones winning on the same id."""
    merged: dict[str, RecordIn] = {}
    for name in scenario.memory.record_sets:
        for record in load_record_set(directory, name):
            merged[record.incident_id] = record
    for record in scenario.memory.records:
        merged[record.incident_id] = record
    return list(merged.values())
