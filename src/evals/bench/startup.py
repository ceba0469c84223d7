"""``recallops bench startup``: how long a command takes from the shell, against the interpreter's start.

Each command runs as a fresh process, the way an engineer types it (``recallops --help``, ``recallops
ask``, ``recallops check-action``), interleaved with ``python -c pass`` so the floor is measured on
the same machine in the same minute: on a shared machine only the ratio to the floor compares across
runs. ``ask`` and ``check-action`` read a data directory the demo history was seeded into first (not
timed), in evidence-only mode. Bytecode is cached as an installed package's is.

Beside the wall time, each run's CPU time (user and system, of the process and its threads) and the
machine's one-minute load average before and after: on a busy machine the wall time grows with the
load, while the CPU time a command spends changes much less, so it is what compares two runs there.
"""

import os
import resource
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
    cpu_p50_s: float | None = None  # None in reports written before CPU time was measured


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class StartupResult:
    runs: int
    floor_p50_s: float
    commands: dict[str, CommandTiming]
    floor_cpu_p50_s: float | None = None
    load_1m: tuple[float, float] | None = None  # before the first timed run, after the last

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> "StartupResult":
        """Back from ``as_dict`` (the report renders its JSON)."""
        commands = {name: CommandTiming(**t) for name, t in data["commands"].items()}
        load = data.get("load_1m")
        return cls(
            runs=data["runs"],
            floor_p50_s=data["floor_p50_s"],
            commands=commands,
            floor_cpu_p50_s=data.get("floor_cpu_p50_s"),
            load_1m=(load[0], load[1]) if load else None,
        )


def _env(data_dir: Path) -> dict[str, str]:
    drop = ("DATABASE_URL", "GROQ_API_KEY", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLOPS_") and k not in drop}
    env["RECALLOPS_DATA_DIR"] = str(data_dir)
    return env


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], env: dict[str, str]) -> Timed:
    """Wall and CPU time of one command; runs are sequential, so the children's CPU grows by its own."""
    cpu, started = _children_cpu_s(), time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=TIMEOUT_S)
    return Timed(wall_s=time.perf_counter() - started, cpu_s=_children_cpu_s() - cpu)


def _load_1m() -> float:
    return round(os.getloadavg()[0], 2)


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
        floor: list[Timed] = []
        times: dict[str, list[Timed]] = {name: [] for name in COMMANDS}
        load_before = _load_1m()
        for _ in range(runs):
            for name, args in COMMANDS.items():
                floor.append(_timed([sys.executable, "-c", "pass"], env))
                times[name].append(_timed([*cli, *args], env))
        load_after = _load_1m()
    floor_p50 = statistics.median(t.wall_s for t in floor)
    return StartupResult(
        runs=runs,
        floor_p50_s=round(floor_p50, 3),
        commands={
            name: CommandTiming(
                p50_s=round(statistics.median(t.wall_s for t in timed), 3),
                p95_s=round(_p95([t.wall_s for t in timed]), 3),
                ratio_to_floor=round(statistics.median(t.wall_s for t in timed) / floor_p50, 1),
                cpu_p50_s=round(statistics.median(t.cpu_s for t in timed), 3),
            )
            for name, timed in times.items()
        },
        floor_cpu_p50_s=round(statistics.median(t.cpu_s for t in floor), 3),
        load_1m=(load_before, load_after),
    )


def _or_dash(value: float | None) -> str:
    return "–" if value is None else str(value)


def summary(result: StartupResult) -> str:
    floor = f"floor (python -c pass) p50 {result.floor_p50_s} s, CPU {_or_dash(result.floor_cpu_p50_s)} s"
    load = (
        ""
        if result.load_1m is None
        else f"; load average {result.load_1m[0]} before, {result.load_1m[1]} after"
    )
    lines = [
        f"Command start to exit, {result.runs} runs each; {floor}{load}",
        "",
        "| command | p50 s | p95 s | p50 / floor | CPU p50 s |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {t.p50_s} | {t.p95_s} | {t.ratio_to_floor} | {_or_dash(t.cpu_p50_s)} |"
        for name, t in result.commands.items()
    ]
    return "\n".join(lines)
