"""The command-line reference (``docs/cli.md``), generated from the commands' own help so it cannot
drift from them: ``make cli-docs`` writes it, and ``tests/web/cli/test_reference.py`` fails in CI when
the page checked in differs from what the commands say. Not a command: the reference is for readers
of the repository, and importing Typer's generator costs ``recallops --help`` nothing this way."""

import typer
from typer.cli import get_docs_for_click

TITLE = "Command-line reference"
PREAMBLE = (
    "Generated from `recallops --help` and every command's help by `make cli-docs`; do not edit by hand.\n"
    "The README's [command line](../README.md#the-command-line) section is the short tour.\n\n"
)


def reference() -> str:
    """Every command and command group, their arguments, options and defaults, as Markdown."""
    from web.cli import app

    command = typer.main.get_command(app)
    ctx = typer.models.Context(command, info_name="recallops")
    text = get_docs_for_click(obj=command, ctx=ctx, name="recallops", title=TITLE)
    heading, _, body = text.strip().partition("\n\n")
    return f"{heading}\n\n{PREAMBLE}{body}\n"


if __name__ == "__main__":
    typer.echo(reference(), nl=False)
