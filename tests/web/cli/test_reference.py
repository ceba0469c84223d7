"""docs/cli.md is what the commands' help says today: a command, option or default changed without
``make cli-docs`` fails here, so the reference a reader trusts never drifts from the code."""

from pathlib import Path

from web.cli.reference import reference

PAGE = Path(__file__).parents[3] / "docs" / "cli.md"


def test_the_checked_in_reference_is_the_generated_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), "docs/cli.md is stale: run `make cli-docs`"


def test_the_reference_covers_every_command_and_names_no_installation_path() -> None:
    text = reference()
    for command in ("serve", "import", "review accept", "check-action", "confidence status", "bench replay"):
        assert f"`recallops {command}`" in text
    assert "[default: (the scenarios shipped with RecallOps)]" in text
    assert str(Path(__file__).parents[3]) not in text
