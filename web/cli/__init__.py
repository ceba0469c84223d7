"""The ``recallops`` command: one module per command group, all reading the same settings."""

import typer

from web.cli import db, serve

app = typer.Typer(help="RecallOps: incident response with memory.", no_args_is_help=True)
app.command("serve")(serve.serve)
app.add_typer(db.app, name="db")
