"""The ``recallops`` command: one module per command group, all reading the same settings.

Commands from packages that depend on the product (the evals' ``eval`` and ``bench``) join through the
``recallops.commands`` entry point group, so the product never imports them. May import ``web.app``,
``web.http`` (to serve it), ``incidents``, ``memory`` and ``agent``.

Every command module is imported to build the command line, so ``recallops --help`` pays for whatever
any of them imports at the top. A command module therefore imports only ``typer``, the standard library
and ``web.cli.common`` at module level; the service's parts (settings, the container, the database, the
agent, the MCP SDK, uvicorn, the embedder) are imported inside the command function that uses them,
and names needed only in annotations go under ``TYPE_CHECKING`` with ``from __future__ import
annotations``. Option defaults must be plain values (a default that needs the service is ``None``,
resolved in the body). ``tests/web/cli/test_startup_imports.py`` renders every command's help in a
fresh interpreter and fails when one of the heavy modules it lists gets loaded.
"""

import gc
from importlib.metadata import entry_points

import typer

from web.cli import ask, db, demo, serve
from web.cli import check_action as check_action_cli
from web.cli import confidence as confidence_cli
from web.cli import grades as grades_cli
from web.cli import history as history_cli
from web.cli import mcp as mcp_cli
from web.cli import memory as memory_cli
from web.cli import notify as notify_cli
from web.cli import profile as profile_cli
from web.cli import resolve_draft as resolve_draft_cli
from web.cli import review as review_cli
from web.cli import token as token_cli
from web.cli import user as user_cli
from web.cli.common import UNUSABLE

# Said once, here: `recallops --help` ends with it and docs/cli.md is generated from that help.
EXIT_CODES = (
    "Exit codes: 0 when done.\n\n"
    "1: the command ran and reports a failure: a record or file an import rejected, a draft refused, "
    "memory writes still failing, a test message not sent, a refresh that failed, a failing scenario, a "
    "benchmark under its floor or against a baseline that shares nothing.\n\n"
    "2: the command could not use what it was given, said in one line starting 'recallops:': an option "
    "or argument that does not parse, an incident, draft, channel, service, user or token that does not "
    "exist, a path that holds nothing to read or a file not in its format, an invalid setting, a "
    "database, memory or address that cannot be reached.\n\n"
    "3: resolve-draft --commit wrote nothing."
)

app = typer.Typer(
    help="RecallOps: incident response with memory.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: formatting it with rich costs more than the rest of the startup
)
app.command("serve")(serve.serve)
app.command("demo")(demo.demo)
app.command("seed")(history_cli.seed)
app.command("import")(history_cli.import_)
app.command("ask")(ask.ask)
app.command("replay")(ask.replay_command)
app.command("resolve-draft")(resolve_draft_cli.resolve_draft)
app.command("check-action")(check_action_cli.check_action)
app.command("grades")(grades_cli.grades_command)
app.command("mcp")(mcp_cli.mcp)
app.add_typer(db.app, name="db")
app.add_typer(user_cli.app, name="user")
app.add_typer(token_cli.app, name="token")
app.add_typer(memory_cli.app, name="memory")
app.add_typer(notify_cli.app, name="notify")
app.add_typer(profile_cli.app, name="profile")
app.add_typer(review_cli.app, name="review")
app.add_typer(confidence_cli.app, name="confidence")

for plugin in entry_points(group="recallops.commands"):
    plugin.load()(app)


def main() -> None:
    """``recallops``: input a command cannot use (an option or argument that does not parse, a bad
    setting, file or address) ends with a one-line reason and exit code 2, never a traceback or Click's
    usage block; a command that ran and found failures exits 1 (``EXIT_CODES``). Anything else is a
    fault of RecallOps and keeps its traceback.

    The process ends when this returns, so what is still alive is frozen out of the garbage collector:
    the interpreter's last collections would otherwise walk every object the command imported (a
    third of a second after ``ask``) only to free memory the process is about to give back.
    """
    try:
        code = app(prog_name="recallops", standalone_mode=False)
    except typer.TyperException as exc:  # the parser refused an option, an argument or a command
        from web.cli.errors import usage_line

        line = usage_line(exc)
        typer.echo(exc.format_message() if line is None else f"recallops: {line}", err=True)
        code = UNUSABLE
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        code = 1
    except Exception as exc:
        from web.cli.errors import user_error

        reason = user_error(exc)
        if reason is None:
            raise
        typer.echo(f"recallops: {' '.join(reason.split())}", err=True)  # a YAML error's lines, too
        code = UNUSABLE
    finally:
        gc.freeze()
    raise SystemExit(code if isinstance(code, int) else 0)
