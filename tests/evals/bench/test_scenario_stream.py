"""The scenarios as a replay stream: time order, judgments from what the scenarios state, one short run."""

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from agent.core.evidence import AlertInput
from agent.resolution.grading import PostMortem
from evals.bench.replay import Incident, Recorded
from evals.bench.scenario_pairs import expected
from evals.bench.scenario_stream import (
    failure_modes,
    history_rows,
    in_time_order,
    incident_of,
    judgments,
    replayable,
)
from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.scenario import Scenario, load_scenarios
from tests.support.wrapped import assert_wrapped
from web.cli import app

START = datetime(2026, 3, 2, tzinfo=UTC)


def _scenario(
    ident: str, *, top1: str | None = None, in_top: tuple[str, ...] = (), **memory: Any
) -> Scenario:
    return Scenario.model_validate(
        {
            "id": ident,
            "title": ident,
            "memory": memory or {"record_sets": ["meridian"]},
            "alert": {"source": "generic", "payload": {"title": "x"}},
            "expect": {"top1": top1, "in_top": list(in_top)},
        }
    )


def test_records_expected_together_are_one_failure_mode_for_every_scenario() -> None:
    first = _scenario("first", top1="PM-1")
    recurrence = _scenario("recurrence", in_top=("PM-1", "PM-2"))
    chained = _scenario("chained", in_top=("PM-2", "PM-3"))
    other = _scenario("other", top1="PM-9")
    novel = _scenario("novel")
    modes = failure_modes([first, recurrence, chained, other, novel])
    assert judgments(first, modes) == {"PM-1": 2, "PM-2": 2, "PM-3": 2}
    assert judgments(other, modes) == {"PM-9": 2}
    assert judgments(novel, modes) == {}  # expects nothing: no precedent exists


def test_cold_start_scenarios_are_left_out() -> None:
    assert replayable(_scenario("meridian"))
    assert replayable(_scenario("seeds", seeds=True))
    assert not replayable(_scenario("off", enabled=False, record_sets=["meridian"]))
    assert not replayable(_scenario("empty", enabled=True))


def test_an_incident_is_graded_on_its_precedents_and_leaves_nothing_in_memory() -> None:
    scenario = _scenario("pool", top1="PM-1001")
    incident = incident_of(scenario, AlertInput(text="pool timeout"), failure_modes([scenario]))
    assert incident.judgments == {"PM-1001": 2}
    assert incident.truth == PostMortem(root_cause="", precedents=frozenset({"PM-1001"}))
    assert incident.row is None


def _incident(n: int) -> Incident:
    return Incident(f"s{n}", AlertInput(text=f"alert {n}"), {}, PostMortem("", frozenset()))


@given(
    st.lists(st.integers(0, 50), max_size=12),
    st.lists(st.integers(0, 50), min_size=1, max_size=6),
)
def test_no_incident_sees_a_record_dated_at_or_after_it(records: list[int], alerts: list[int]) -> None:
    rows = [
        {"incident_id": f"r{n}", "timestamp": (START + timedelta(days=d)).isoformat()}
        for n, d in enumerate(records)
    ]
    incidents = [(_incident(n), START + timedelta(days=d)) for n, d in enumerate(alerts)]
    events = in_time_order(rows, incidents)
    fired = {incident.id: at for incident, at in incidents}
    before: list[datetime] = []
    seen_incidents = []
    for event in events:
        if isinstance(event, Recorded):
            before += [datetime.fromisoformat(r["timestamp"]) for r in event.rows]
            continue
        assert all(at < fired[event.id] for at in before)
        assert sum(at < fired[event.id] for at in before) == sum(
            START + timedelta(days=d) < fired[event.id] for d in records
        )
        seen_incidents.append(event.id)
    assert sorted(seen_incidents) == sorted(fired)  # every incident once
    assert seen_incidents == [i.id for i, _ in sorted(incidents, key=lambda p: p[1])]  # stable in time
    assert not any(isinstance(a, Recorded) and isinstance(b, Recorded) for a, b in pairwise(events))


def test_the_project_scenarios_judge_only_records_they_expect_and_their_memory_holds() -> None:
    scenarios = load_scenarios(DEFAULT_SCENARIOS)
    modes = failure_modes(scenarios)
    stated = {record for s in scenarios for record in expected(s)}
    for seeds in (False, True):
        group = [s for s in scenarios if replayable(s) and s.memory.seeds == seeds]
        held = {str(row["incident_id"]) for row in history_rows(group, DEFAULT_SCENARIOS)}
        for scenario in group:
            judged = judgments(scenario, modes)
            assert set(expected(scenario)) <= set(judged) <= stated & held, scenario.id


def test_a_short_replay_of_three_scenarios_from_their_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("01-checkout-pool-flash-sale", "02-payment-processor-429", "27-novel-alert"):
        shutil.copy(DEFAULT_SCENARIOS / f"{name}.yaml", cases)
    shutil.copytree(DEFAULT_SCENARIOS / "records", cases / "records")
    result = CliRunner().invoke(app, ["bench", "replay", "--scenario-dir", str(cases), "--json"])
    assert result.exit_code == 0, result.output
    systems = json.loads(result.stdout)["systems"]
    assert set(systems) == {"learning", "learning_inferred", "frozen", "bm25", "memory_off"}
    for figures in systems.values():
        assert (figures["incidents"], figures["with_relevant_earlier"]) == (3, 2)
    off = systems["memory_off"]
    assert (off["recall@1"], off["recall@5"], off["mean_grade"], off["abstain_recall"]) == (
        0.0,
        0.0,
        0.0,
        1.0,
    )
    assert systems["frozen"]["recall@5"] == 1.0  # both precedents are in the Meridian history
    assert [h["incidents"] for h in systems["learning"]["halves"]] == [2, 1]
    # The same stream again, against the run just saved: the replay is deterministic, so nothing moved.
    saved = tmp_path / "before.json"
    saved.write_text(result.stdout)
    args = ["bench", "replay", "--scenario-dir", str(cases), "--baseline", str(saved)]
    monkeypatch.setenv("COLUMNS", "60")  # its prose wraps under each system's bullet; its tables stay whole
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    prose = " ".join(again.stdout.split())
    assert "Against before.json (3 incidents in both" in prose
    assert prose.count("gained nowhere, lost nowhere; no figure worse on either half") == 5
    monkeypatch.setenv("COLUMNS", "1000")
    wide = CliRunner().invoke(app, args)
    untimed = [re.sub(r"Replayed in [\d.]+ s", "Replayed in", out) for out in (wide.stdout, again.stdout)]
    assert assert_wrapped(*untimed, 60) >= 5


def test_a_directory_without_a_scenario_to_replay_is_refused_by_name(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(DEFAULT_SCENARIOS / "14-cold-start-memory-off.yaml", tmp_path)  # memory off: none to replay
    for directory, message in (
        (empty, f"no scenario in {empty} has a history to replay"),
        (tmp_path, f"no scenario in {tmp_path} has a history to replay"),
    ):
        result = CliRunner().invoke(app, ["bench", "replay", "--scenario-dir", str(directory)])
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.output.split())
        assert "Traceback" not in result.output


def test_a_missing_record_set_is_named_not_a_crash(tmp_path: Path) -> None:
    text = (DEFAULT_SCENARIOS / "01-checkout-pool-flash-sale.yaml").read_text(encoding="utf-8")
    assert "- meridian" in text
    (tmp_path / "01.yaml").write_text(text.replace("- meridian", "- our-history"), encoding="utf-8")
    result = CliRunner().invoke(app, ["bench", "replay", "--scenario-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "record set 'our-history' not found" in result.output
    assert not isinstance(result.exception, OSError)
