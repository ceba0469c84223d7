"""The evals' commands, ``recallops eval`` and ``recallops bench``, added to the CLI by entry point.

May import the product and the rest of ``evals``.
"""

import typer

from evals.cli import bench, eval


def register(app: typer.Typer) -> None:
    app.add_typer(bench.app, name="bench")
    app.command("eval")(eval.eval_command)
