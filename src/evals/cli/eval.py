"""``recallops eval``: the scenario evaluations, deterministic in evidence-only mode.

Exit status 1 when an evidence-only scenario fails. With a Groq key (``--llm``, the default when one is
set) the same scenarios also run against the model and are reported under ``llm``.
"""

import json
import logging
from pathlib import Path

import typer

from evals.scenarios import DEFAULT_SCENARIOS, SHIPPED_SCENARIOS


def eval_command(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object and nothing else."),
    scenarios: Path = typer.Option(
        DEFAULT_SCENARIOS,
        "--scenarios",
        exists=True,
        file_okay=False,
        show_default=SHIPPED_SCENARIOS,
        help="Directory of scenario YAML.",
    ),
    only: list[str] = typer.Option([], "--only", help="Run just these scenario ids (repeatable)."),
    llm: bool | None = typer.Option(
        None, "--llm/--no-llm", help="Also run against the model (default: when a model is configured)."
    ),
) -> None:
    """Run every scenario: per-scenario results, totals, faithfulness rates and the memory replay."""
    from agent.settings import LLMSettings
    from evals.scenarios.report import UnknownScenario, evaluate_sync, render

    # Each scenario migrates a throwaway database: its schema upgrades are not the operator's to read.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        summary = evaluate_sync(scenarios, mode="evidence-only", only=only or None)
        use_llm = LLMSettings().uses_llm if llm is None else llm
        if use_llm:
            summary["llm"] = evaluate_sync(scenarios, mode="llm", only=only or None)
    except UnknownScenario as exc:
        raise typer.BadParameter(str(exc), param_hint="--only") from None
    except ValueError as exc:  # a scenario file that does not read, or two with one id
        raise typer.BadParameter(str(exc), param_hint="--scenarios") from None
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        typer.echo(render(summary))
        if "llm" in summary:
            typer.echo("")
            typer.echo(render(summary["llm"]))
    if summary["failed"]:
        raise typer.Exit(1)
