"""``recallops notify test --timeout N`` answers in about N seconds, whatever the receiver does."""

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.chaos import ChaosReceiver
from tests.support.server import LiveServer

TIMEOUT_S = 2
STARTUP_S = 60  # the interpreter and the imports on a loaded machine: a deadline, not a measurement


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
    assert done.returncode == 1, done.stdout
    assert done.stderr == "error: no channel 'nosuch' is configured (configured: audit)\n"
    assert "queued" not in done.stdout
