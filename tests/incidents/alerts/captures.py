"""The real alert captures shared with the repository, and the Grafana payloads kept beside these tests."""

import json
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

FIXTURES = SHARED / "fixtures"
DATA = Path(__file__).parent / "data"


def capture_files(source: str) -> list[Path]:
    files = sorted((FIXTURES / source).glob("*.json"))
    assert files, f"no captures under {FIXTURES / source}"
    return files


def body(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["body"]


def capture(source: str, name: str) -> dict[str, Any]:
    return body(FIXTURES / source / f"{name}.json")


def grafana(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"grafana-{name}.json").read_text())
