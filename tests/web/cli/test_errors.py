"""Bad settings and bad database URLs end a command with a one-line reason and exit 2, never a
traceback (a file that is not UTF-8 is covered with the import, in test_history)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from incidents.database import script_heads
from tests.support.net import free_port
from tests.support.server import LiveServer

BAD_CHANNEL = '[{"name": "a", "kind": "webhook", "url": "ftp://zz/x"}]'
# a minimum no alert could reach, or every one would: refused, naming it and what is accepted
UNRANKED_MINIMUM = '[{"name": "a", "kind": "webhook", "url": "http://x", "min_severity": "P0"}]'
UNRANKED = (
    "channel 1 (a): min_severity 'P0' is not a severity RecallOps ranks; use one of (most urgent first) crit"
)
NOT_MIGRATED = {"RECALLOPS_MIGRATE_ON_START": "false", "RECALLOPS_SCHEMA_WAIT_S": "0"}


@pytest.mark.parametrize(
    ("command", "env", "reason"),
    [
        (["db", "upgrade"], {"RECALLOPS_DATABASE_URL": "nonsense"}, "database URL"),
        (["db", "upgrade"], {"RECALLOPS_DATABASE_URL": "nosuchdb://host/x"}, "database URL"),
        (["notify", "status"], {"RECALLOPS_NOTIFY_CHANNELS": '[{"name": "a",'}, "NOTIFY_CHANNELS is"),
        (["token", "list"], {"RECALLOPS_NOTIFY_CHANNELS": "not json"}, "RECALLOPS_NOTIFY_CHANNELS is not"),
        # a list written bare, as other tools take it: the variable is named, and what it takes
        (["token", "list"], {"RECALLOPS_TRUSTED_PROXIES": "10.0.0.5"}, "TRUSTED_PROXIES is not JSON"),
        (["token", "list"], {"RECALLOPS_SERVICE_LABELS": "service,job"}, "it takes a JSON list, e.g. ["),
        (["token", "list"], {"RECALLOPS_PORT": "70000"}, "RECALLOPS_PORT: Input should be less than"),
        (["token", "list"], {"RECALLOPS_MAX_BODY_BYTES": "-1"}, "RECALLOPS_MAX_BODY_BYTES"),
        (["token", "list"], {"DATABASE_URL": "mysql://u:p@127.0.0.1:1/x"}, "no driver for the database URL"),
        (["token", "list"], {"RECALLOPS_DATA_DIR": "/proc/nope"}, "/proc/nope (RECALLOPS_DATA_DIR"),
        (["serve", "--port", "1"], {"RECALLOPS_NOTIFY_CHANNELS": BAD_CHANNEL}, "channel 1 (a): url"),
        (["notify", "status"], {"RECALLOPS_NOTIFY_CHANNELS": BAD_CHANNEL}, "channel 1 (a): url"),
        (["serve", "--port", "1"], {"RECALLOPS_NOTIFY_CHANNELS": UNRANKED_MINIMUM}, UNRANKED),
        (["notify", "status"], {"RECALLOPS_NOTIFY_CHANNELS": UNRANKED_MINIMUM}, UNRANKED),
        (["serve", "--port", "1"], {"RECALLOPS_DATA_DIR": "/proc/nope"}, "/proc/nope (RECALLOPS_DATA_DIR"),
        (["serve", "--port", "1"], {"RECALLOPS_MAX_LABELS": "0"}, "RECALLOPS_MAX_LABELS"),
        (
            ["serve", "--port", "1"],
            {"RECALLOPS_PUBLIC_URL": "recallops.example.org"},
            "RECALLOPS_PUBLIC_URL: is not an http:// or https:// URL",
        ),
        (["serve", "--port", "1"], NOT_MIGRATED, "run `recallops db upgrade`"),
        (["token", "list"], NOT_MIGRATED, "run `recallops db upgrade`"),  # a command migrates nothing either
        (["notify", "status"], NOT_MIGRATED, "run `recallops db upgrade`"),
    ],
)
def test_a_bad_setting_is_a_message_not_a_traceback(
    tmp_path: Path, command: list[str], env: dict[str, str], reason: str
) -> None:
    result = LiveServer(tmp_path / "data", env=env).cli(*command, check=False)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "╭" not in result.stderr
    assert result.stderr.startswith("recallops: ") and reason in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_missing_seed_folder_or_a_closed_port_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    operator = LiveServer(tmp_path / "data")
    closed = f"http://127.0.0.1:{free_port()}"
    broken, listless = tmp_path / "broken", tmp_path / "listless"
    for folder, services in ((broken, "services: [a"), (listless, "services: 3")):
        folder.mkdir()
        (folder / "services.yaml").write_text(services)
    for command, reason in (
        (["seed", "--dir", str(tmp_path / "nowhere")], f"cannot read {tmp_path / 'nowhere'}"),
        (["seed", "--dir", str(broken)], f"{broken / 'services.yaml'} is not valid YAML"),
        (["seed", "--dir", str(listless)], f"{listless / 'services.yaml'} holds no list under 'services'"),
        (["bench", "ingest", "--url", closed, "--token", "t", "--alerts", "2"], f"cannot reach {closed}"),
    ):
        result = operator.cli(*command, check=False)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and "╭" not in result.stderr
        assert result.stderr.startswith(f"recallops: {reason}"), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_list_setting_in_env_file_that_is_not_json_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("RECALLOPS_SERVICE_LABELS=service\n")
    env = LiveServer(tmp_path / "data").environ()
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in sys.path if p)
    result = subprocess.run(
        [sys.executable, "-m", "web.cli", "token", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert "RECALLOPS_SERVICE_LABELS in .env is not JSON" in result.stderr
    assert "EnvSettingsSource" not in result.stderr and "service_labels" not in result.stderr


def test_serve_on_a_port_in_use_is_one_line_before_the_app_starts(tmp_path: Path) -> None:
    """The service already listening there is the usual cause: nothing of a second one starts."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = LiveServer(tmp_path / "data").cli("serve", "--port", str(port), check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"recallops: cannot listen on 127.0.0.1:{port}: Address already in use; choose --port"
    )


def test_serve_waiting_for_the_schema_says_so_before_it_waits(tmp_path: Path) -> None:
    """A replica that must not migrate and finds no schema says what it waits for, not nothing for minutes."""
    env = {"RECALLOPS_MIGRATE_ON_START": "false", "RECALLOPS_SCHEMA_WAIT_S": "0.5"}
    result = LiveServer(tmp_path / "data", env=env).cli("serve", "--port", str(free_port()), check=False)
    assert result.returncode == 2, result.stderr
    head = ", ".join(sorted(script_heads()))
    waiting, refused = result.stderr.strip().splitlines()
    assert waiting.startswith(f"recallops: waiting up to 0.5s for the database schema to reach {head}")
    assert "run `recallops db upgrade` once" in waiting
    assert refused.startswith(f"recallops: the database schema is at no revision, this release needs {head}")


def test_serve_on_an_address_not_of_this_host_says_so_not_choose_a_port(tmp_path: Path) -> None:
    result = LiveServer(tmp_path / "data").cli("serve", "--host", "192.0.2.1", "--port", "8000", check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "recallops: cannot listen on 192.0.2.1:8000: Cannot assign requested address; "
        "--host takes an address of this host"
    )


def test_a_channel_file_missing_or_not_yaml_is_named_by_its_variable_in_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "channels.yaml"
    broken.write_text("channels:\n  - name: a\n   kind: webhook\n")
    for path, reason in (
        (tmp_path / "nowhere.yaml", "No such file or directory"),
        (broken, "is not valid YAML"),
    ):
        env = {"RECALLOPS_NOTIFY_CONFIG": str(path)}
        result = LiveServer(tmp_path / "data", env=env).cli("notify", "status", check=False)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"recallops: RECALLOPS_NOTIFY_CONFIG {path}"), result.stderr
        assert reason in result.stderr and "Errno" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
