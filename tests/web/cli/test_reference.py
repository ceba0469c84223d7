"""docs/cli.md is what the commands' help says today: a command, option or default changed without
``make cli-docs`` fails here, so the reference a reader trusts never drifts from the code."""

import re
from pathlib import Path
from typing import Any

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


def test_every_argument_and_option_says_what_it_takes() -> None:
    """A bare ``name <str>  [required]`` leaves the operator to guess which name: each parameter of
    every command carries its own help."""
    silent = []
    stack: list[tuple[str, Any]] = [("recallops", typer.main.get_command(app))]
    while stack:
        path, command = stack.pop()
        for name, sub in getattr(command, "commands", {}).items():
            stack.append((f"{path} {name}", sub))
        for param in command.params:
            if param.name not in ("help", "install_completion", "show_completion") and not getattr(
                param, "help", None
            ):
                silent.append(f"{path} {param.name}")
    assert sorted(silent) == []
