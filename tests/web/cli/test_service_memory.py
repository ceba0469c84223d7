"""An admin shell that shares the service's database but not its memory settings: ``recallops serve``
records the service's memory, a command that would write memory elsewhere refuses in one line naming
both, ``--allow-other-memory`` lets it, and a reading command only warns."""

import json
import sqlite3
from pathlib import Path

import pytest

from memory.settings import MemorySettings
from tests.support.net import free_port
from tests.support.server import LiveServer

ROW = {
    "incident_id": "PM-2024-031",
    "service": "search-service",
    "timestamp": "2024-11-02T10:00:00Z",
    "symptom": "Search results empty for new products",
    "error_signature": "EsRejectedExecutionException: rejected execution of bulk",
    "root_cause": "Bulk queue too small for the import burst",
    "resolution_steps": "Throttled the importer; raised the bulk queue to 1000",
    "outcome": "Index caught up in 40 minutes",
}


@pytest.fixture
def service_dir(tmp_path: Path) -> Path:
    """The data directory of a service that ran once (its database and its embedded memory)."""
    server = LiveServer(data_dir=tmp_path / "service").start()
    server.stop()
    return tmp_path / "service"


def admin_shell(service_dir: Path, data_dir: Path) -> LiveServer:
    """A shell on the service's database whose own memory is the embedded bank in ``data_dir``."""
    env = {"RECALLOPS_DATABASE_URL": f"sqlite:///{service_dir / 'recallops.db'}"}
    return LiveServer(data_dir=data_dir, env=env)


def test_serve_records_the_memory_it_uses(service_dir: Path) -> None:
    with sqlite3.connect(service_dir / "recallops.db") as conn:
        rows = conn.execute("SELECT driver, location FROM service_memory").fetchall()
    assert rows == [("embedded", MemorySettings(data_dir=service_dir).location)]


def test_writing_commands_refuse_another_memory_naming_both(service_dir: Path, tmp_path: Path) -> None:
    shell = admin_shell(service_dir, tmp_path / "shell")
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps(ROW) + "\n")
    mine = MemorySettings(data_dir=tmp_path / "shell").location
    theirs = MemorySettings(data_dir=service_dir).location
    for command in (("seed",), ("import", str(history)), ("memory", "sync"), ("profile", "refresh")):
        refused = shell.cli(*command, check=False)
        assert refused.returncode == 2, (command, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stderr.startswith("recallops: "), refused.stderr
        assert f"this shell's memory is {mine}, but the service uses {theirs}" in refused.stderr
        assert "--allow-other-memory" in refused.stderr
        assert "(RECALLOPS_DATA_DIR)" in refused.stderr and "HINDSIGHT" not in refused.stderr
    assert not (tmp_path / "shell" / "memory.db").exists()
    with sqlite3.connect(service_dir / "recallops.db") as conn:
        assert conn.execute("SELECT count(*) FROM incidents").fetchone() == (0,)


def test_the_service_settings_write_and_the_override_writes_elsewhere_with_a_warning(
    service_dir: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps(ROW) + "\n")
    same = admin_shell(service_dir, service_dir).cli("import", str(history))
    assert "imported 1" in same.stdout and "warning" not in same.stderr

    other = admin_shell(service_dir, tmp_path / "shell")
    allowed = other.cli("memory", "sync", "--allow-other-memory")
    assert allowed.stderr.startswith("recallops: warning: this shell's memory is ")


def test_the_demo_seeds_memory_so_it_refuses_another_and_takes_the_override_it_names(
    service_dir: Path, tmp_path: Path
) -> None:
    shell = admin_shell(service_dir, tmp_path / "shell")
    refused = shell.cli("demo", check=False)
    assert refused.returncode == 2 and "or pass --allow-other-memory" in refused.stderr
    allowed = shell.cli("demo", "--allow-other-memory")
    assert allowed.stderr.startswith("recallops: warning: this shell's memory is ")
    assert "RecallOps demo is ready" in allowed.stdout


def test_a_reading_command_warns_and_goes_on(service_dir: Path, tmp_path: Path) -> None:
    shown = admin_shell(service_dir, tmp_path / "shell").cli("profile", "show")
    assert shown.stderr.startswith("recallops: warning: this shell's memory is ")
    assert "The profile has not been built yet" in shown.stdout


def test_a_service_started_on_another_memory_says_it_moved(service_dir: Path, tmp_path: Path) -> None:
    moved = LiveServer(data_dir=tmp_path / "moved", env=admin_shell(service_dir, tmp_path).env).start()
    moved.stop()
    before = MemorySettings(data_dir=service_dir).location
    now = MemorySettings(data_dir=tmp_path / "moved").location
    assert f"recallops: the service's memory was {before} (recorded by recallops serve on " in moved.log()
    assert f"; it is now {now}" in moved.log()


def test_copying_the_service_memory_out_is_the_move_and_copying_another_bank_is_refused(
    service_dir: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps(ROW) + "\n")
    admin_shell(service_dir, service_dir).cli("import", str(history))

    moving = admin_shell(service_dir, tmp_path / "new").cli(
        "memory", "copy", "--from-embedded", str(service_dir)
    )
    assert moving.stdout.splitlines()[-1] == "copied 1, already there 0, failed 0"
    theirs = MemorySettings(data_dir=service_dir).location
    assert moving.stderr.startswith(f"recallops: warning: the service still uses {theirs} (recorded by ")

    elsewhere = admin_shell(service_dir, tmp_path / "other")
    refused = elsewhere.cli("memory", "copy", "--from-embedded", str(tmp_path / "new"), check=False)
    assert refused.returncode == 2 and "but the service uses" in refused.stderr
    assert not (tmp_path / "other" / "memory.db").exists()


def test_accepting_a_draft_is_refused_and_leaves_it_for_review(service_dir: Path, tmp_path: Path) -> None:
    note = tmp_path / "search-outage.md"
    note.write_text(
        "# Search outage\n\nSymptom: search results were empty for new products.\n"
        "Root cause: the bulk queue was too small for the import burst.\n"
        "Resolution: throttled the importer and raised the bulk queue to 1000.\n"
    )
    shell = admin_shell(service_dir, tmp_path / "shell")
    drafted = shell.cli("import", str(note))  # drafting writes no memory: it only warns
    assert drafted.stderr.startswith("recallops: warning: this shell's memory is ")
    refused = shell.cli("review", "accept", "1", check=False)
    assert refused.returncode == 2 and "but the service uses" in refused.stderr
    assert "pending" in shell.cli("review", "list").stdout


def test_replicas_and_shells_naming_one_hindsight_server_differently_share_its_memory(tmp_path: Path) -> None:
    port = free_port()  # nothing needs to answer: the record is made and compared before memory is used
    database = {
        "RECALLOPS_DATABASE_URL": f"sqlite:///{tmp_path / 'recallops.db'}",
        "RECALLOPS_MEMORY": "hindsight",
    }

    def at(url: str, name: str) -> LiveServer:
        return LiveServer(data_dir=tmp_path / name, env={**database, "RECALLOPS_HINDSIGHT_BASE_URL": url})

    at(f"http://localhost:{port}/", "replica-a").start().stop()
    replica_b = at(f"http://127.0.0.1:{port}", "replica-b").start()
    replica_b.stop()
    assert "the service's memory was" not in replica_b.log()

    synced = at(f"HTTP://LOCALHOST:{port}", "shell").cli("memory", "sync", check=False)
    assert synced.returncode == 0, synced.stderr
    assert "memory" not in synced.stderr


def test_a_shell_refused_for_the_services_hindsight_is_told_the_hindsight_settings(tmp_path: Path) -> None:
    """The settings that would give the shell the service's memory are the recorded driver's: a data
    directory says nothing about which Hindsight server and bank."""
    database = {"RECALLOPS_DATABASE_URL": f"sqlite:///{tmp_path / 'recallops.db'}"}
    hindsight = {"RECALLOPS_MEMORY": "hindsight", "HINDSIGHT_BASE_URL": f"http://127.0.0.1:{free_port()}"}
    LiveServer(data_dir=tmp_path / "service", env={**database, **hindsight}).start().stop()
    refused = LiveServer(data_dir=tmp_path / "shell", env=database).cli("memory", "sync", check=False)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "(RECALLOPS_MEMORY=hindsight, HINDSIGHT_BASE_URL, RECALLOPS_BANK_ID)" in refused.stderr
    assert "RECALLOPS_DATA_DIR" not in refused.stderr
