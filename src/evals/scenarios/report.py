"""Run a set of scenarios and summarise them: pass counts, faithfulness rates, what memory changed."""

import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent.core.schema import ClaimCheck
from evals.scenarios.faithfulness import Faithfulness
from evals.scenarios.roles import RoleSupport, check_roles
from evals.scenarios.runner import MemoryTemplates, Mode, ScenarioResult, run_scenario
from evals.scenarios.scenario import load_scenarios


class UnknownScenario(ValueError):
    """An id asked for that no scenario of the directory has."""


async def run_all(directory: Path, *, mode: Mode, only: list[str] | None = None) -> list[ScenarioResult]:
    """Scenarios one after another (each owns a database and a bank), in file order. An id in ``only``
    that no scenario has is refused, naming it: a mistyped id must not pass by running nothing."""
    scenarios = load_scenarios(directory)
    unknown = sorted(set(only or ()) - {s.id for s in scenarios})
    if unknown:
        raise UnknownScenario(f"no scenario with the id {', '.join(map(repr, unknown))} in {directory}")
    results = []
    with tempfile.TemporaryDirectory(prefix="recallops-eval-memory-") as tmp:
        templates = MemoryTemplates(Path(tmp))
        for scenario in scenarios:
            if only and scenario.id not in only:
                continue
            results.append(await run_scenario(scenario, directory, mode=mode, templates=templates))
    return results


def guard_removals(briefings: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What the product's claim guard took out of the briefings, by role and by reason: the eval's
    in-role support reads what it left."""
    checks = [ClaimCheck.model_validate(b.get("claim_check") or {}) for b in briefings]
    by_role: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    for check in checks:
        by_role.update(check.removed_by_role())
        by_reason.update(check.removed_by_reason())
    return {
        "kept": sum(sum(c.kept.values()) for c in checks),
        "removed": sum(by_role.values()),
        "removed_by_role": dict(sorted(by_role.items())),
        "removed_by_reason": dict(sorted(by_reason.items())),
    }


def summarize(results: list[ScenarioResult], *, mode: Mode, seconds: float) -> dict[str, Any]:
    faithfulness = Faithfulness()
    roles = RoleSupport()
    for result in results:
        faithfulness.add(result.faithfulness)
        if result.briefing is not None:
            roles.add(check_roles(result.briefing))
    effects = {r.id: r.memory_effect for r in results if r.memory_effect is not None}
    passed = sum(r.passed for r in results)
    gaps = sum(r.gap for r in results)
    return {
        "mode": mode,
        "passed": passed,
        "failed": len(results) - passed - gaps,
        "known_gaps": gaps,
        "total": len(results),
        "pass_rate": passed / len(results) if results else None,
        "seconds": round(seconds, 1),
        "roles": roles.as_dict(),
        "guard": guard_removals(r.briefing for r in results if r.briefing is not None),
        "faithfulness": faithfulness.as_dict() | {"briefings": sum(r.briefing is not None for r in results)},
        "memory_replay": {
            "scenarios": len(effects),
            "changed": sorted(i for i, e in effects.items() if e.changed),
            "top_cause_changed": sorted(i for i, e in effects.items() if e.top_cause_changed),
            "risky_actions_changed": sorted(i for i, e in effects.items() if e.risky_actions_changed),
        },
        "scenarios": [
            {
                "id": r.id,
                "title": r.title,
                "kinds": r.kinds,
                "passed": r.passed,
                "known_gap": r.known_gap if r.gap else None,
                "failures": r.failures,
                "error": r.error,
                "seen_before": (r.briefing or {}).get("seen_before"),
                "related": [i.get("id") for i in (r.briefing or {}).get("related_incidents") or []],
                "faithfulness": r.faithfulness.rates(),
                "roles": check_roles(r.briefing).as_dict() if r.briefing is not None else None,
                "memory_changed": r.memory_effect.changed if r.memory_effect else None,
            }
            for r in results
        ],
    }


async def evaluate(directory: Path, *, mode: Mode, only: list[str] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    results = await run_all(directory, mode=mode, only=only)
    return summarize(results, mode=mode, seconds=time.perf_counter() - started)


def evaluate_sync(directory: Path, *, mode: Mode, only: list[str] | None = None) -> dict[str, Any]:
    return asyncio.run(evaluate(directory, mode=mode, only=only))


ORIGIN_WORDS = {"model": "the model's", "evidence": "evidence-only"}


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render(summary: dict[str, Any]) -> str:
    """Per-scenario lines, then totals, faithfulness rates and the memory replay, for a terminal."""
    lines = [f"Scenario evals ({summary['mode']}):"]
    for item in summary["scenarios"]:
        mark = "PASS" if item["passed"] else "GAP " if item["known_gap"] else "FAIL"
        lines.append(f"  {mark}  {item['id']}")
        if item["known_gap"]:
            lines.append(f"          known gap: {item['known_gap']}")
        lines += [f"          - {f}" for f in item["failures"]]
        if item["error"]:
            lines.append(f"          ! {item['error']}")
    lines.append(
        f"passed {summary['passed']}, failed {summary['failed']}, known gaps {summary['known_gaps']}, "
        f"total {summary['total']} ({summary['seconds']} s)"
    )
    rates = summary["faithfulness"]["rates"]
    lines.append(
        "faithfulness: "
        + ", ".join(f"{name} {_rate(rates[name])}" for name in ("cited", "in_range", "supported", "canary"))
        + f" over {summary['faithfulness']['briefings']} briefings, {summary['faithfulness']['items']} items"
    )
    roles = summary["roles"]
    by_role = ", ".join(f"{s} {c['in_role']}/{c['kept']}" for s, c in roles["by_role"].items())
    by_origin = ", ".join(
        f"{ORIGIN_WORDS.get(o, o)} {c['in_role']}/{c['kept']}"
        for o, c in roles["by_origin"].items()
        if c["kept"]
    )
    lines.append(
        f"in-role support: {_rate(roles['in_role_rate'])} ({by_role}; {by_origin}); "
        f"failed attempts offered as a fix: {len(roles['failed_attempt_fixes'])}"
    )
    lines += [f"  - fix: {text}" for text in roles["failed_attempt_fixes"]]
    lines += [
        f"  - not in role ({c['role']}, {ORIGIN_WORDS.get(c['origin'], c['origin'])}, "
        f"on {c['part'] or 'nothing'} {c['share']:.0%}): {c['text']}"
        for c in roles["out_of_role"]
    ]
    guard = summary["guard"]
    removed = ", ".join(f"{role} {n}" for role, n in guard["removed_by_role"].items()) or "none"
    checked = guard["kept"] + guard["removed"]
    lines.append(f"claims removed by the guard: {guard['removed']} of {checked} ({removed})")
    replay = summary["memory_replay"]
    lines.append(
        f"memory replay: memory changed the top likely cause or the risky actions in "
        f"{len(replay['changed'])} of {replay['scenarios']} scenarios"
    )
    lines += [f"  - {i}" for i in replay["changed"]]
    return "\n".join(lines)
