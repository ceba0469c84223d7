"""``recallops bench soak`` end to end, briefly, on two replicas sharing one database: the audit it
prints, not how fast it was."""

import json
from pathlib import Path

import pytest

from tests.e2e.resolution_helpers import issue_token
from tests.support.server import LiveServer

pytestmark = pytest.mark.e2e


def test_bench_soak_over_two_replicas_reports_a_clean_audit(tmp_path: Path) -> None:
    shared = {"RECALLOPS_DATABASE_URL": f"sqlite:///{tmp_path / 'recallops.db'}"}
    a = LiveServer(tmp_path / "a", env=shared).start()
    b = LiveServer(tmp_path / "b", env=shared).start()
    try:
        token = issue_token(a)
        done = a.cli(
            *("bench", "soak", "--url", a.url, "--url", b.url, "--token", token, "--json"),
            *("--minutes", "0.1", "--concurrency", "4", "--groups", "3", "--resolve-every", "10"),
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        result = json.loads(done.stdout)
        assert result["clean"] and result["errors"] == 0
        assert result["alerts"] > 0 and result["resolves"] > 0
        assert set(result["floor_rps"]) == {a.url, b.url}
        audit = result["audit"]
        assert audit["incidents"] >= 3
        faults = ("lost", "duplicated", "extra_open_incidents", "briefings_missing", "briefings_duplicated")
        assert all(audit[key] == 0 for key in (*faults, "memory_unsynced", "resolves_lost", "unverifiable"))
    finally:
        a.stop()
        b.stop()
