"""``recallops ask``, ``check-action`` and ``replay`` in an 80- or 60-column terminal: a briefing's items,
a check's records and what memory changed go on under their bullet when they wrap, so they do not run
into each other;
``--json`` is the object on one line, never wrapped."""

import json
from pathlib import Path

import pytest

from tests.support.server import LiveServer
from tests.support.wrapped import assert_wrapped

ALERT = "checkout-service p99 latency above 2s, connection pool exhausted, requests timing out"
WIDTH = 60


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("narrow") / "data"
    LiveServer(data_dir=data).cli("seed")
    return data


def _at(data_dir: Path, columns: int, *args: str) -> str:
    return LiveServer(data_dir=data_dir, env={"COLUMNS": str(columns)}).cli(*args).stdout


def test_a_briefing_wraps_each_item_under_its_bullet(data_dir: Path) -> None:
    command = ("ask", ALERT, "--service", "checkout-service")
    wide, narrow = _at(data_dir, 1000, *command), _at(data_dir, WIDTH, *command)
    assert "Risky actions (made it worse before):" in narrow and "  [2] INC-" in narrow
    assert assert_wrapped(wide, narrow, WIDTH) > 10


def test_a_checked_move_wraps_each_record_under_its_bullet(data_dir: Path) -> None:
    command = ("check-action", "INC-2025-014", "scale checkout to 18 pods and raise the postgres pool")
    wide, narrow = _at(data_dir, 1000, *command), _at(data_dir, WIDTH, *command)
    assert narrow.startswith("RISKY") and "\n  - INC-" in narrow
    assert assert_wrapped(wide, narrow, WIDTH) >= 2


def test_a_replay_wraps_what_memory_changed_under_each_added_item(data_dir: Path) -> None:
    command = ("replay", "INC-2025-014")
    wide, narrow = _at(data_dir, 1000, *command), _at(data_dir, WIDTH, *command)
    assert "\nWhat memory changed:\n  + " in narrow
    assert assert_wrapped(wide, narrow, WIDTH) > 5


def test_json_is_never_wrapped(data_dir: Path) -> None:
    out = _at(data_dir, WIDTH, "ask", ALERT, "--service", "checkout-service", "--json")
    [line] = out.splitlines()
    assert len(line) > WIDTH and json.loads(line)["related_incidents"]
