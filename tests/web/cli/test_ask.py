"""``recallops ask`` and ``recallops replay`` as an operator runs them: JSON only on stdout with --json."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from web.cli import app


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL", "GROQ_API_KEY", "RECALLOPS_GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path / "data"))
    return CliRunner()


def test_ask_json_prints_the_briefing_and_nothing_else(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["ask", "disk full on /var/lib/postgresql", "--service", "orders-db", "--json"]
    )
    assert result.exit_code == 0, result.output
    briefing = json.loads(result.stdout)
    assert briefing["mode"] == "evidence-only" and briefing["seen_before"] == "novel"
    assert briefing["summary"].startswith("No prior incident is known")


def test_ask_reads_stdin_and_renders_text(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["ask", "-", "--memory", "off", "--title", "Disk full"], input="no space left\n"
    )
    assert result.exit_code == 0, result.output
    assert "memory: off" in result.stdout and "[1] The alert" in result.stdout


def test_empty_text_and_unknown_incident_are_errors(runner: CliRunner) -> None:
    assert runner.invoke(app, ["ask", "  "]).exit_code == 2
    missing = runner.invoke(app, ["replay", "INC-9999"])
    assert missing.exit_code == 2 and "no incident 'INC-9999'" in missing.output
