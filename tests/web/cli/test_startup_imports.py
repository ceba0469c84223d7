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

import pytest

# Third-party packages that cost a visible fraction of a second to import, and the product's own
# packages that pull them in. A command imports these inside its body, when it runs.
HEAVY = (
    "mcp",
    "fastapi",
    "starlette",
    "uvicorn",
    "onnxruntime",
    "onnx",
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


# What the commands an engineer types during an incident never need: the model SDKs without a model
# configured, migrations on a database already at head, the chat senders, the embedding SDK's client,
# the worker's metrics, and the SQL dialect of a database not in use (these run on SQLite).
NOT_ON_CALL = (
    "groq",
    "openai",
    "alembic",
    "apprise",
    "slack_sdk",
    "aiohttp",
    "mcp",
    "fastapi",
    "tryaii",
    "prometheus_client",
    "web.app.metrics",
    "sqlalchemy.dialects.postgresql",
    "psycopg",
)

COMMAND = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules))))
from web.cli import main
sys.argv = ["recallops", *json.loads(sys.argv[1])]
main()
"""


def _env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("RECALLOPS_") and k != "GROQ_API_KEY"}
    return {**keep, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), **extra}


def loaded_by(code: str, *args: str, env: dict[str, str] | None = None, check: bool = True) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env or _env(),
        check=check,
        timeout=300,
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


@pytest.mark.parametrize(
    "command",
    [["ask", "checkout p99 over 2s", "--memory", "off"], ["check-action", "INC-1", "restart every pod"]],
    ids=["ask", "check-action"],
)
def test_the_on_call_commands_load_no_model_sdk_nor_migrations(command: list[str], tmp_path: Path) -> None:
    env = _env(RECALLOPS_DATA_DIR=str(tmp_path))
    subprocess.run(
        [sys.executable, "-m", "web.cli", "db", "upgrade"],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    modules = loaded_by(COMMAND, json.dumps(command), env=env, check=False)
    assert "web.app.container" in modules  # the command ran
    assert sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in NOT_ON_CALL)) == []
