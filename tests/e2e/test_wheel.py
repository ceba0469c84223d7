"""The wheel, installed the way a new user would, runs with nothing from the checkout.

``python -m build`` makes the sdist and, from it, the wheel; the wheel goes into a fresh venv in a
temporary directory outside the checkout (its dependencies from the ordinary pip index and cache),
and ``recallops demo``, ``recallops serve`` (one alert posted, its briefing stored) and
``recallops eval`` run there with that directory as the working directory.
"""

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.net import free_port, http_ok, wait_for

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "checkout-pool-flash-sale"  # one scenario: the whole suite runs in tests/evals


def _run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A venv outside the checkout with only the built wheel (and its dependencies) installed."""
    home = tmp_path_factory.mktemp("wheel-user")
    assert not home.resolve().is_relative_to(ROOT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALLOPS_", "GROQ_", "PYTHON"))}
    env.pop("DATABASE_URL", None)
    env.pop("VIRTUAL_ENV", None)
    env.update({"RECALLOPS_DATA_DIR": str(home / "data"), "RECALLOPS_WORKER_POLL_S": "0.1"})
    dist = home / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=home, env=env, timeout=600)
    wheels = sorted(dist.glob("recallops-*.whl"))
    assert wheels and sorted(dist.glob("recallops-*.tar.gz")), sorted(p.name for p in dist.iterdir())
    venv = home / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=home, env=env, timeout=120)
    _run([str(venv / "bin" / "pip"), "install", "-q", str(wheels[0])], cwd=home, env=env, timeout=1200)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    yield home, env


def test_the_wheel_holds_no_checkout_paths(installed: tuple[Path, dict[str, str]]) -> None:
    home, env = installed
    where = _run(
        ["python", "-c", "import web, evals, memory; print(web.__file__, evals.__file__, memory.__file__)"],
        cwd=home,
        env=env,
        timeout=60,
    )
    assert str(ROOT) not in where and "site-packages" in where


def test_demo_serve_and_eval_run_from_the_wheel(installed: tuple[Path, dict[str, str]]) -> None:
    home, env = installed
    demo = _run(["recallops", "demo"], cwd=home, env=env, timeout=600)
    match = re.search(r"Bearer (\S+?)'", demo)
    assert match, demo
    token = match.group(1)

    port = free_port()
    log_path = home / "serve.log"
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            ["recallops", "serve", "--port", str(port)],
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: server.poll() is None and http_ok(f"{base}/healthz"),
            timeout=120,
            what=f"the installed server on {port}",
        )
        headers = {"Authorization": f"Bearer {token}"}
        posted = httpx.post(
            f"{base}/api/v1/alerts",
            headers=headers,
            json={
                "service": "checkout-service",
                "title": "Checkout p99 latency over 2s",
                "description": "remaining connection slots are reserved; pool timeout acquiring connection",
                "severity": "critical",
            },
            timeout=30,
        )
        assert posted.status_code in (200, 201, 202), posted.text
        incident = posted.json()["incidents"][0]

        def briefed() -> dict[str, Any] | None:
            found = httpx.get(f"{base}/api/v1/incidents/{incident}/briefing", headers=headers, timeout=10)
            body: dict[str, Any] = found.json()
            return body if found.status_code == 200 else None

        detail = wait_for(briefed, timeout=180, interval=0.5, what="the briefing stored")
        assert detail["briefing"]["related_incidents"], detail["briefing"]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert str(ROOT) not in log_path.read_text(errors="replace")

    report = _run(["recallops", "eval", "--only", SCENARIO, "--no-llm"], cwd=home, env=env, timeout=900)
    assert "passed 1, failed 0, known gaps 0, total 1" in report, report
