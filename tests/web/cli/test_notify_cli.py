"""``recallops notify test --timeout N`` answers in about N seconds, whatever the receiver does."""

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from incidents.database import make_engine, make_session_factory
from incidents.delivery.routing import enabled_routes
from tests.support.chaos import ChaosReceiver
from tests.support.server import LiveServer
from web.app.settings import Settings
from web.cli import app
from web.http.app import create_app

TIMEOUT_S = 2
STARTUP_S = 60  # the interpreter and the imports on a loaded machine: a deadline, not a measurement
SERVICE_CHANNEL = {"name": "oncall", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}


@pytest.fixture
def dripping() -> Iterator[ChaosReceiver]:
    receiver = ChaosReceiver("drip", drip_s=0.5).start()  # faster than any per-read timeout
    yield receiver
    receiver.stop()


def test_notify_test_returns_at_its_timeout_against_a_receiver_that_drips(
    dripping: ChaosReceiver, tmp_path: Path
) -> None:
    channels = [{"name": "drip", "kind": "webhook", "url": dripping.url}]
    server = LiveServer(tmp_path / "data", env={"RECALLOPS_NOTIFY_CHANNELS": json.dumps(channels)})
    server.data_dir.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "web.cli", "notify", "test", "drip", "--timeout", str(TIMEOUT_S)],
        env=server.environ(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S + STARTUP_S,
    )
    assert done.returncode == 1
    assert "failed: no complete answer within" in done.stderr  # tried once, not retried later
    assert f"(drip, webhook http://127.0.0.1:{dripping.port}/…)" in done.stderr
    assert "path-secret" not in done.stderr + done.stdout and "Traceback" not in done.stderr
    status = server.cli("notify", "status").stdout
    when = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"
    assert re.search(rf"\n  last error {when}: no complete answer", status), status


@pytest.mark.parametrize("command", ["retry", "test"])
def test_an_unknown_channel_is_refused_naming_the_configured_ones(tmp_path: Path, command: str) -> None:
    channels = [{"name": "audit", "kind": "webhook", "url": "http://127.0.0.1:9/h"}]
    server = LiveServer(tmp_path / "data", env={"RECALLOPS_NOTIFY_CHANNELS": json.dumps(channels)})
    done = server.cli("notify", command, "nosuch", check=False)
    assert done.returncode == 2, done.stdout
    assert done.stderr == "recallops: no channel 'nosuch' is configured (configured: audit)\n"
    assert "queued" not in done.stdout


def test_a_command_run_without_the_services_channels_leaves_them_routed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator's shell rarely holds the service's channel configuration: a command run from it (or
    with a test channel of its own) must not turn the service's channels off, nor add its own."""
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL", "RECALLOPS_NOTIFY_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps([SERVICE_CHANNEL]))
    with TestClient(create_app(Settings())):
        pass  # the service starts: its channels are the routing
    runner = CliRunner()
    monkeypatch.delenv("RECALLOPS_NOTIFY_CHANNELS")
    assert runner.invoke(app, ["memory", "sync"]).exit_code == 0
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps([{**SERVICE_CHANNEL, "name": "laptop"}]))
    assert runner.invoke(app, ["notify", "status"]).exit_code == 0
    engine = make_engine(Settings().database_url)
    try:
        with make_session_factory(engine)() as db:
            assert [route.name for route in enabled_routes(db_session=db)] == ["oncall"]
    finally:
        engine.dispose()
