"""``recallops notify test --timeout N`` answers in about N seconds, whatever the receiver does."""

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from incidents.database import make_engine, make_session_factory, transaction
from incidents.delivery import outbox
from incidents.delivery.models import Delivery
from incidents.delivery.routing import TEST, enabled_routes
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


@pytest.fixture
def service_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service has started once with its channel ``oncall`` (its start writes the routing), in a
    shell holding no other database or channel file."""
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL", "RECALLOPS_NOTIFY_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps([SERVICE_CHANNEL]))
    with TestClient(create_app(Settings())):
        pass


@pytest.mark.usefixtures("service_started")
def test_a_command_run_without_the_services_channels_leaves_them_routed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An operator's shell rarely holds the service's channel configuration: a command run from it (or
    with a test channel of its own) must not turn the service's channels off, nor add its own."""
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


@pytest.mark.usefixtures("service_started")
def test_a_channel_its_receiver_holds_is_not_tested_and_no_test_message_waits_to_go_out_later() -> None:
    """A test queued while a Retry-After holds the channel would be sent when the wait ends, long
    after the command gave up: the command says until when instead, and queues nothing."""
    engine = make_engine(Settings().database_url)
    try:
        sessions = make_session_factory(engine)
        with transaction(sessions) as db:
            outbox.owe_one(db_session=db, channel="oncall", event=TEST, data={})  # an earlier test
            [claim] = outbox.claim_due(db_session=db, limit=1, lease_s=60)
            outbox.fail(
                db_session=db,
                claim=claim,
                error="429 from the webhook",
                retry=True,
                retry_after_s=600,
                retry_for_s=1800,
            )
        done = CliRunner().invoke(app, ["notify", "test", "oncall", "--timeout", str(TIMEOUT_S)])
        assert done.exit_code == 1
        assert re.match(
            r"held until \S+: the receiver asked to wait \(Retry-After\), answering 429 from the webhook; "
            r"no test is sent before \(oncall, webhook http://127\.0\.0\.1:9/…\)\n$",
            done.stderr,
        ), done.stderr
        with sessions() as db:
            assert len(db.scalars(select(Delivery)).all()) == 1  # the earlier one, and nothing new
    finally:
        engine.dispose()


@pytest.mark.usefixtures("service_started")
def test_status_from_a_shell_without_the_services_channels_shows_them_as_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An admin shell holds the database URL, not the channels' secrets: the service's channels are
    still configured there, not "no delivery channels configured" nor "no longer configured"."""
    monkeypatch.delenv("RECALLOPS_NOTIFY_CHANNELS")
    result = CliRunner().invoke(app, ["notify", "status"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "oncall  webhook http://127.0.0.1:9/…: nothing yet",
        "outbox: 0 pending, 0 failing",
    ]


@pytest.mark.usefixtures("service_started")
def test_retry_and_test_from_a_shell_without_the_services_channels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retrying a service channel's messages needs no secret (the service sends them), so an admin
    shell may; a test message is sent from the shell, which says what it lacks to send one."""
    monkeypatch.delenv("RECALLOPS_NOTIFY_CHANNELS")
    runner = CliRunner()
    retried = runner.invoke(app, ["notify", "retry", "oncall"])
    assert retried.exit_code == 0, retried.output
    assert retried.output == "0 message(s) queued again\n"
    tested = runner.invoke(app, ["notify", "test", "oncall"])
    assert tested.exit_code == 2
    assert tested.output == (
        "recallops: channel 'oncall' is the service's, but this shell has not its configuration: send the "
        "test with RECALLOPS_NOTIFY_CONFIG or RECALLOPS_NOTIFY_CHANNELS as the service has them\n"
    )
    unknown = runner.invoke(app, ["notify", "retry", "nosuch"])
    assert unknown.exit_code == 2
    assert unknown.output == "recallops: no channel 'nosuch' is configured (configured: oncall)\n"
