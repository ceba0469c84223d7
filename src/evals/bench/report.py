"""``recallops bench all``: every benchmark in one run, one ``report.json`` and one ``report.md``.

Each benchmark is the same function its own command calls, at small default sizes so the whole
report takes minutes; flags make it bigger. The ingest benchmark needs a live server, so this starts
one on a free loopback port with its own data directory and token, and stops it afterwards. The
machine is described beside the figures, since every figure depends on it.
"""

import asyncio
import json
import os
import platform
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.engine import make_url

from agent.settings import LLMSettings
from evals.bench import briefing as briefing_bench
from evals.bench import history as history_bench
from evals.bench import ingest as ingest_bench
from evals.bench import pages as pages_bench
from evals.bench import recall as recall_bench
from evals.bench import retrieval as retrieval_bench
from evals.bench import startup as startup_bench
from evals.bench.sizes import Sizes
from evals.scenarios import DEFAULT_SCENARIOS
from evals.scenarios.report import evaluate as evaluate_scenarios
from memory.embedder import MODEL_ID

SERVER_START_S = 60.0


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu_model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    ram_gb = None
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        ram_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    llm = LLMSettings()
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "ram_gb": ram_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "numpy": metadata.version("numpy"),
        "onnxruntime": metadata.version("onnxruntime"),
        "embedding_model": MODEL_ID,
        "llm": llm.llm_model if llm.uses_llm else "evidence-only (no key)",
    }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLOPS_") and k != "DATABASE_URL"}
    env["RECALLOPS_DATA_DIR"] = str(data_dir)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


@contextmanager
def live_server(data_dir: Path, database_url: str | None = None) -> Iterator[tuple[str, str]]:
    """A ``recallops serve`` subprocess on a free loopback port, and a token that may post alerts.

    Its database is SQLite in ``data_dir`` unless ``database_url`` names another (PostgreSQL)."""
    env = _env(data_dir, database_url)
    command = [sys.executable, "-m", "web.cli"]
    created = subprocess.run(
        [*command, "token", "create", "--name", "bench-ingest", "--scope", "alerts:write"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    token = created.stdout.strip().splitlines()[-1]
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (data_dir / "server.log").open("ab")
    server = subprocess.Popen(
        [*command, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited early; see {data_dir / 'server.log'}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server did not answer /healthz within {SERVER_START_S:g} s")
            time.sleep(0.1)
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()


async def _ingest(sizes: Sizes) -> list[dict[str, Any]]:
    """Intake on SQLite, then on ``ingest_database_url`` when one is given, each with its own floor."""
    rows = []
    for database_url in (None, sizes.ingest_database_url) if sizes.ingest_database_url else (None,):
        with (
            tempfile.TemporaryDirectory(prefix="recallops-ingest-") as tmp,
            live_server(Path(tmp), database_url) as (url, token),
        ):
            result = await ingest_bench.run_ingest(
                url=url, token=token, alerts=sizes.ingest_alerts, concurrency=sizes.ingest_concurrency
            )
        database = make_url(database_url).get_backend_name() if database_url else "sqlite"
        rows.append({"database": database} | result.as_dict())
    return rows


async def _recall(sizes: Sizes) -> list[dict[str, Any]]:
    results = await recall_bench.run_recall(list(sizes.recall_sizes))
    if sizes.hindsight_url:
        results.append(await recall_bench.run_hindsight(sizes.hindsight_url))
    return results


async def _briefing(sizes: Sizes) -> dict[str, Any]:
    result = await briefing_bench.run_briefing_bench(
        incidents=sizes.briefing_incidents, alerts=sizes.briefing_alerts
    )
    return result.as_dict()


async def _pages(sizes: Sizes) -> dict[str, Any]:
    result = await asyncio.to_thread(
        pages_bench.run_pages_bench, incidents=sizes.pages_incidents, runs=sizes.pages_runs
    )
    return result.as_dict()


async def _startup(sizes: Sizes) -> dict[str, Any]:
    result = await asyncio.to_thread(startup_bench.run_startup_bench, runs=sizes.startup_runs)
    return result.as_dict()


async def _history(sizes: Sizes) -> dict[str, Any]:
    return (await history_bench.run_history_bench(records=sizes.history_records)).as_dict()


async def _retrieval(sizes: Sizes) -> dict[str, Any]:
    return await retrieval_bench.run_retrieval(sizes.corpus, sizes.qrels, hindsight_url=sizes.hindsight_url)


async def _evals(sizes: Sizes) -> dict[str, Any]:
    return await evaluate_scenarios(DEFAULT_SCENARIOS, mode="evidence-only")


STEPS: dict[str, Callable[[Sizes], Awaitable[Any]]] = {
    "startup": _startup,
    "ingest": _ingest,
    "recall": _recall,
    "briefing": _briefing,
    "pages": _pages,
    "history": _history,
    "retrieval": _retrieval,
    "evals": _evals,
}


async def run_all(sizes: Sizes, *, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Every step in turn; a step that fails is recorded with its error and the others still run."""
    report: dict[str, Any] = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "sizes": {k: _size(v) for k, v in sizes.__dict__.items()},
        "benchmarks": {},
        "errors": {},
    }
    for name, step in STEPS.items():
        progress(name)
        started = time.perf_counter()
        try:
            report["benchmarks"][name] = await step(sizes)
        except Exception as exc:
            report["errors"][name] = f"{type(exc).__name__}: {exc}"
        report.setdefault("seconds", {})[name] = round(time.perf_counter() - started, 1)
    return report


def _size(value: Any) -> Any:
    """A size as the report shows it: paths as text, a database URL without its password."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str) and "://" in value:
        return make_url(value).render_as_string(hide_password=True)
    return value


def _cell(value: Any) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _table(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    keys = list(dict.fromkeys(k for row in rows for k in row))
    return [
        "| " + " | ".join(keys) + " |",
        "|" + "---|" * len(keys),
        *("| " + " | ".join(_cell(row.get(k, "")) for k in keys) + " |" for row in rows),
    ]


def markdown(report: dict[str, Any]) -> str:
    """The report for people: the machine, then one section per benchmark."""
    m = report["machine"]
    lines = [
        "# RecallOps benchmark report",
        "",
        f"Generated {report['generated_at']} on {m['cpu_count']} × {m['cpu_model']}, {m['ram_gb']} GB RAM, "
        f"{m['os']}, Python {m['python']}, SQLite {m['sqlite']}, numpy {m['numpy']}, "
        f"onnxruntime {m['onnxruntime']}; embeddings {m['embedding_model']}; LLM {m['llm']}.",
        "",
        "Sizes: " + ", ".join(f"{k} {v}" for k, v in report["sizes"].items()) + ".",
    ]
    bench = report["benchmarks"]
    seconds = report.get("seconds", {})
    for name in STEPS:
        lines += ["", f"## {name} ({seconds.get(name, '?')} s)", ""]
        if name in report["errors"]:
            lines.append(f"**Failed:** {report['errors'][name]}")
            continue
        value = bench[name]
        if name == "retrieval":
            lines.append(retrieval_bench.markdown_table(value))
        elif name == "evals":
            rates = value["faithfulness"]["rates"]
            replay = value["memory_replay"]
            lines += [
                f"Passed {value['passed']}, failed {value['failed']}, known gaps "
                f"{value.get('known_gaps', 0)}, total {value['total']} ({value['mode']}).",
                "",
                "Faithfulness: " + ", ".join(f"{k} {_cell(v)}" for k, v in rates.items()) + ".",
                "",
                f"Memory changed the top likely cause or the risky actions in {len(replay['changed'])} of "
                f"{replay['scenarios']} scenarios: {', '.join(replay['changed']) or 'none'}.",
            ]
            for s in (s for s in value["scenarios"] if not s["passed"]):
                mark = "GAP" if s.get("known_gap") else "FAIL"
                lines.append(f"- {mark} {s['id']}: {'; '.join(s['failures']) or s['error']}")
        elif name == "startup":
            lines.append(startup_bench.summary(startup_bench.StartupResult.of(value)))
        elif name == "pages":
            lines.append(
                f"{value['incidents']} incidents, {value['runs']} runs a page; floor p50 "
                f"{_cell(value['floor_p50_ms'])} ms."
            )
            lines += ["", *_table([{"page": page} | timing for page, timing in value["pages"].items()])]
        elif isinstance(value, list):
            lines += _table(value)
        else:
            lines += _table([value])
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    json_path.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path


def run_and_write(sizes: Sizes, out: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    report = asyncio.run(run_all(sizes, progress=progress))
    write(report, out)
    return report
