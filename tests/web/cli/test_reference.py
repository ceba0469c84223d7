"""docs/cli.md is what the commands' help says today: a command, option or default changed without
``make cli-docs`` fails here, so the reference a reader trusts never drifts from the code."""

import re
from pathlib import Path

import typer

from web.cli import app
from web.cli.reference import reference

PAGE = Path(__file__).parents[3] / "docs" / "cli.md"
PAGES = [*sorted(PAGE.parent.glob("*.md")), PAGE.parents[1] / "README.md"]
MENTION = re.compile(r"`recallops ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")


def test_the_checked_in_reference_is_the_generated_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), "docs/cli.md is stale: run `make cli-docs`"


def test_the_reference_covers_every_command_and_names_no_installation_path() -> None:
    text = reference()
    for command in ("serve", "import", "review accept", "check-action", "confidence status", "bench replay"):
        assert f"`recallops {command}`" in text
    assert "[default: (the scenarios shipped with RecallOps)]" in text
    assert str(Path(__file__).parents[3]) not in text


def test_every_command_the_docs_name_exists() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    unknown = []
    for page in PAGES:
        for name, sub in MENTION.findall(page.read_text(encoding="utf-8")):
            subcommands = getattr(commands.get(name), "commands", None)
            if name not in commands or (subcommands is not None and sub and sub not in subcommands):
                unknown.append(f"{page.name}: recallops {name} {sub}".strip())
    assert unknown == [], "the docs name commands that do not exist"
