"""``bench import --notes``: a team's own notes scored against a careful reader's fields."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from web.cli import app

CASUAL = Path(__file__).parents[3] / "corpora" / "casual-postmortems"
NOTE = (
    "# checkout outage 2026-02-03\n\n"
    "## What happened\n\nCheckout returned HTTP 502 errors for everyone.\n\n"
    "## Root cause\n\nThe card processor's certificate expired.\n\n"
    "## Fix\n\nRolled the cert bundle.\n"
)


def _folder(tmp_path: Path, *rows: dict[str, str]) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "checkout.md").write_text(NOTE, encoding="utf-8")
    (tmp_path / "expected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def _bench(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["bench", "import", *args])
    return result.exit_code, result.output


def test_each_field_is_scored_against_the_readers_answer(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {
            "file": "checkout.md",
            "symptom": "Checkout returned HTTP 502 errors for everyone.",
            "root_cause": "the card processor's certificate expired",
            "resolution_steps": "Rolled the cert bundle and restarted checkout",
            "failed_attempts": "scaling checkout up",
            "timestamp": "2026-02-03",
        },
    )
    code, output = _bench("--notes", str(folder), "--json")
    assert code == 0, output
    fields = json.loads(output)["fields"]
    assert fields["symptom"]["f1"] == 1.0 and fields["root_cause"]["f1"] == 1.0
    # four of the reader's seven words, and every word extracted is one of them
    assert fields["resolution_steps"]["precision"] == 1.0
    assert fields["resolution_steps"]["recall"] == pytest.approx(4 / 7, abs=1e-3)
    # the note never says what did not help: counted as a miss, not left out
    missed = fields["failed_attempts"]
    assert (missed["f1"], missed["fill_rate"], missed["documents"]) == (0.0, 0.0, 1)
    assert fields["timestamp"]["f1"] == 1.0
    # the reader named no service and no error signature: nothing to score
    assert fields["service"]["documents"] == 0 and fields["error_signature"]["documents"] == 0


def test_a_wrong_day_scores_nothing(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"file": "checkout.md", "timestamp": "2026-02-04"})
    code, output = _bench("--notes", str(folder), "--json")
    assert code == 0, output
    assert json.loads(output)["fields"]["timestamp"]["f1"] == 0.0


def test_the_table_names_every_scored_field(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"file": "checkout.md", "symptom": "checkout 502"})
    code, output = _bench("--notes", str(folder))
    assert code == 0, output
    assert "1 notes against a careful reader's fields" in output
    for name in ("symptom", "failed_attempts", "service", "timestamp"):
        assert f"| {name} |" in output


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"file": "gone.md"}', "no file notes/gone.md"),
        ('{"file": "checkout.md", "cause": "x"}', "unknown field cause"),
        ("not json", "expected.jsonl line 1: not JSON"),
    ],
)
def test_a_listing_it_cannot_score_is_named(tmp_path: Path, line: str, said: str) -> None:
    folder = _folder(tmp_path)
    (folder / "expected.jsonl").write_text(line + "\n", encoding="utf-8")
    code, output = _bench("--notes", str(folder))
    assert code == 2 and said in output and "Traceback" not in output


def test_notes_and_a_corpus_are_two_modes(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"file": "checkout.md"})
    code, output = _bench("--notes", str(folder), "--documents", str(tmp_path))
    assert code == 2 and "leave out --corpus and --documents" in output
    code, output = _bench("--documents", str(tmp_path))
    assert code == 2 and "give --corpus and --documents, or --notes" in output


def test_the_projects_casual_notes_are_all_scored() -> None:
    code, output = _bench("--notes", str(CASUAL), "--json")
    assert code == 0, output
    result = json.loads(output)
    assert result["notes"] == 12
    assert all(result["fields"][name]["documents"] >= 8 for name in result["fields"])
