"""``recallops bench startup``: how long a command takes from the shell, against the interpreter's start.

Each command runs as a fresh process, the way an engineer types it (``recallops --help``, ``recallops
ask``, ``recallops check-action``), interleaved with ``python -c pass`` so the floor is measured on
the same machine in the same minute: on a shared machine only the ratio to the floor compares across
runs. ``ask`` and ``check-action`` read a data directory the demo history was seeded into first (not
timed), in evidence-only mode. Bytecode is cached as an installed package's is.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SEEDED_INCIDENT = "INC-2025-014"  # the demo's checkout pool incident
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "ask": [
        "ask",
        "checkout p99 over 2s, pool timeout acquiring connection",
        "--service",
        "checkout-service",
    ],
    "check-action": ["check-action", SEEDED_INCIDENT, "restart every checkout pod at once"],
}
TIMEOUT_S = 300.0


@dataclass(frozen=True)
class CommandTiming:
    p50_s: float
    p95_s: float
    ratio_to_floor: float


@dataclass(frozen=True)
class StartupResult:
    runs: int
    floor_p50_s: float
    commands: dict[str, CommandTiming]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> "StartupResult":
        """Back from ``as_dict`` (the report renders its JSON)."""
        commands = {name: CommandTiming(**t) for name, t in data["commands"].items()}
        return cls(runs=data["runs"], floor_p50_s=data["floor_p50_s"], commands=commands)


def _env(data_dir: Path) -> dict[str, str]:
    drop = ("DATABASE_URL", "GROQ_API_KEY", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLOPS_") and k not in drop}
    env["RECALLOPS_DATA_DIR"] = str(data_dir)
    return env


def _timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=TIMEOUT_S)
    return time.perf_counter() - started


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def run_startup_bench(*, runs: int = 5) -> StartupResult:
    """p50/p95 of each command over ``runs`` fresh processes, and of the bare interpreter beside them."""
    cli = [sys.executable, "-m", "web.cli"]
    with tempfile.TemporaryDirectory(prefix="recallops-startup-") as tmp:
        env = _env(Path(tmp))
        subprocess.run([*cli, "seed"], env=env, check=True, capture_output=True, timeout=1800)
        for args in COMMANDS.values():  # one untimed run each: bytecode written, files warm
            _timed([*cli, *args], env)
        floor: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(runs):
            for name, args in COMMANDS.items():
                floor.append(_timed([sys.executable, "-c", "pass"], env))
                times[name].append(_timed([*cli, *args], env))
    floor_p50 = statistics.median(floor)
    return StartupResult(
        runs=runs,
        floor_p50_s=round(floor_p50, 3),
        commands={
            name: CommandTiming(
                p50_s=round(statistics.median(t), 3),
                p95_s=round(_p95(t), 3),
                ratio_to_floor=round(statistics.median(t) / floor_p50, 1),
            )
            for name, t in times.items()
        },
    )


def summary(result: StartupResult) -> str:
    lines = [
        f"Command start to exit, {result.runs} runs each; floor (python -c pass) p50 {result.floor_p50_s} s",
        "",
        "| command | p50 s | p95 s | p50 / floor |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {t.p50_s} | {t.p95_s} | {t.ratio_to_floor} |" for name, t in result.commands.items()
    ]
    return "\n".join(lines)
