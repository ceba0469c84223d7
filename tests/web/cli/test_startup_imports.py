"""``recallops --help`` and every command's ``--help`` load none of the service's heavy parts.

Every command module is imported to build the command line, so a module-level import of the app, the
MCP SDK or the embedder is paid by every command, even ``--help``. The check runs in a fresh
interpreter (this test process has imported everything already) and reads ``sys.modules`` there.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

# Third-party packages that cost a visible fraction of a second to import, and the product's own
# packages that pull them in. A command imports these inside its body, when it runs.
HEAVY = (
    "mcp",
    "fastapi",
    "starlette",
    "uvicorn",
    "onnxruntime",
    "tokenizers",
    "numpy",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "groq",
    "httpx",
    "apprise",
    "slack_sdk",
    "hindsight_client",
    "jinja2",
    "pydantic_settings",
    "yaml",
    "argon2",
    "web.app",
    "web.http",
    "web.mcp",
    "agent",
    "incidents",
    "memory",
    "evals.bench.report",
    "evals.scenarios.report",
)

PROBE = """
import json, sys
import click
import typer.main
from web.cli import app

def walk(command, ctx):
    command.get_help(ctx)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            walk(sub, click.Context(sub, info_name=name, parent=ctx))

root = typer.main.get_command(app)
walk(root, click.Context(root, info_name="recallops"))
print(json.dumps(sorted(sys.modules)))
"""

ROOT = Path(__file__).resolve().parents[3]


def loaded_by(code: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=300
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_every_help_screen_loads_no_heavy_module() -> None:
    modules = loaded_by(PROBE)
    assert "web.cli.ask" in modules and "evals.cli.bench" in modules  # the walk reached the commands
    assert heavy_in(modules) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """The check can fail: a command module that imports the app at the top is caught."""
    assert "web.app.container" in heavy_in(loaded_by("import sys, json, web.app.container\n" + PROBE))
