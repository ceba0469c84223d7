"""Scenario files: strict schema, shared record sets, and loud failures on bad data."""

from pathlib import Path

import pytest
import yaml

from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.scenario import Scenario, load_record_set, load_scenarios, records_for

ALERT = {"source": "generic", "payload": {"title": "x"}}


def test_unknown_keys_and_incoherent_expectations_are_refused() -> None:
    with pytest.raises(ValueError):
        Scenario.model_validate({"id": "a", "title": "t", "alert": ALERT, "expect": {"top_1": "PM-1"}})
    with pytest.raises(ValueError):
        Scenario.model_validate(
            {"id": "a", "title": "t", "alert": ALERT, "expect": {"no_prior": True, "in_top": ["PM-1"]}}
        )


def test_record_sets_are_shared_and_inline_records_win(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    record = {
        "incident_id": "PM-1",
        "service": "a",
        "timestamp": "2025-01-01T00:00:00Z",
        "symptom": "s",
        "error_signature": "e",
        "root_cause": "shared",
        "resolution_steps": "r",
    }
    (tmp_path / "records" / "base.yaml").write_text(f"records: [{record}]".replace("'", '"'))
    scenario = Scenario.model_validate(
        {
            "id": "a",
            "title": "t",
            "memory": {"record_sets": ["base"], "records": [{**record, "root_cause": "inline"}]},
            "alert": ALERT,
            "expect": {},
        }
    )
    assert [r.root_cause for r in records_for(scenario, tmp_path)] == ["inline"]


def test_duplicate_ids_and_broken_files_name_the_file(tmp_path: Path) -> None:
    body = "id: same\ntitle: t\nalert: {source: generic, payload: {title: x}}\nexpect: {}\n"
    (tmp_path / "01-a.yaml").write_text(body)
    (tmp_path / "02-b.yaml").write_text(body)
    with pytest.raises(ValueError, match="duplicate scenario ids: same"):
        load_scenarios(tmp_path)
    (tmp_path / "02-b.yaml").write_text("id: b\n")
    with pytest.raises(ValueError, match=r"02-b\.yaml"):
        load_scenarios(tmp_path)


def test_held_out_scenarios_load_the_shipped_record_sets_they_do_not_carry(tmp_path: Path) -> None:
    """Written against Meridian's year of post-mortems, they need not copy it; their own copy wins."""
    shipped = load_record_set(DEFAULT_SCENARIOS, "meridian")
    assert load_record_set(tmp_path, "meridian") == shipped
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "meridian.yaml").write_text(
        yaml.safe_dump({"records": [shipped[0].model_dump(mode="json")]}), encoding="utf-8"
    )
    assert load_record_set(tmp_path, "meridian") == shipped[:1]
