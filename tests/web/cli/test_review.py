"""``recallops import`` of free-form history and ``recallops review`` as an operator runs them."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from incidents.resolution.outbox import QueueStats
from tests.support.server import LiveServer
from web.app.container import Container
from web.cli import app
from web.cli import memory as memory_cli

FILES = Path(__file__).parents[2] / "memory" / "extraction" / "files"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "postmortems"
    shutil.copytree(FILES, folder)
    (folder / "scan.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    (folder / "notes.txt").write_bytes("Panne de la base de données".encode("latin-1"))
    return folder


def _memory(tmp_path: Path, document_id: str) -> dict[str, str]:
    with sqlite3.connect(tmp_path / "data" / "memory.db") as memory:
        row = memory.execute(
            "SELECT metadata FROM documents WHERE document_id = ?", (document_id,)
        ).fetchone()
    return dict(json.loads(row[0])) if row else {}


def test_a_folder_is_drafted_once_reviewed_and_accepted_drafts_reach_memory(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    folder = _folder(tmp_path)
    first = operator.cli("import", str(folder), "--by", "dana", check=False)
    assert first.returncode == 1, first.stderr  # two files could not be read
    assert "files read 10, documents 10, new drafts 10, already imported 0" in first.stdout
    assert "unreadable postmortems/scan.pdf: binary file (a PDF)" in first.stdout
    assert "unreadable postmortems/notes.txt: not UTF-8 text" in first.stdout
    assert "fields filled: title 10/10" in first.stdout
    again = operator.cli("import", str(folder), check=False)
    assert "new drafts 0, already imported 10" in again.stdout

    listed = operator.cli("review", "list").stdout
    assert "pending" in listed and "postmortems/checkout-db-failover.md" in listed
    draft_id = next(line.split()[0] for line in listed.splitlines() if "checkout-db-failover.md" in line)
    shown = operator.cli("review", "show", draft_id).stdout
    assert "root_cause [" in shown and "The orders primary was failed over" in shown

    accepted = operator.cli("review", "accept", draft_id, "--by", "oncall")
    public_id = accepted.stdout.split(" accepted as ")[1].split()[0]
    assert "written to memory: 1" in accepted.stdout
    meta = _memory(tmp_path, public_id)
    assert meta["source"] == "postmortems/checkout-db-failover.md"
    assert (meta["imported_by"], meta["accepted_by"], meta["origin"]) == ("dana", "oncall", "import")
    refused = operator.cli("review", "accept", draft_id, check=False)
    assert refused.returncode == 1 and "already accepted" in refused.stderr

    other = next(line.split()[0] for line in listed.splitlines() if "confluence" in line)
    operator.cli("review", "reject", other, "--reason", "a drill")
    assert "rejected" in operator.cli("review", "list", "--state", "rejected").stdout
    asked = operator.cli("ask", "checkout 503 psycopg server closed the connection unexpectedly", "--json")
    assert public_id in asked.stdout


def test_accept_all_accepts_complete_drafts_and_reports_the_rest(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    thin = tmp_path / "thin.md"
    thin.write_text("# Outage on the 3rd\n\nSomething broke and we fixed it.\n")
    result = operator.cli(
        "import", str(FILES / "checkout-db-failover.md"), str(thin), "--accept-all", check=False
    )
    assert result.returncode == 1
    assert "accepted 1 (written to memory: 1), left for review 1" in result.stdout
    assert "(thin.md): required fields not found in the source: " in result.stdout
    assert "fill what is missing with `recallops review edit N --set FIELD=TEXT`" in result.stdout
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        assert store.execute("SELECT count(*) FROM incidents WHERE origin = 'import'").fetchone()[0] == 1


def test_an_operator_fills_what_the_extraction_missed_and_then_accepts(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    notes = tmp_path / "sessions.md"
    notes.write_text(
        "# Storefront sessions lost, 14 April 2026\n\nService: storefront\n\n"
        "## Summary\nUsers were logged out at random for 50 minutes and carts emptied.\n\n"
        "## Root cause\nA batch job filled the session Redis to maxmemory and LRU evicted live sessions.\n\n"
        "## Resolution\nDeleted the batch keys and moved the job to its own Redis.\n"
    )
    operator.cli("import", str(notes))
    listed = operator.cli("review", "list").stdout
    draft_id = next(line.split()[0] for line in listed.splitlines() if "sessions.md" in line)
    assert "missing: error_signature, outcome" in listed

    refused = operator.cli("review", "accept", draft_id, check=False)
    assert refused.returncode == 1
    assert f"write error_signature, outcome with `recallops review edit {draft_id} --set" in refused.stderr

    bad = operator.cli("review", "edit", draft_id, "--set", "severity=high", check=False)
    assert bad.returncode == 2 and "severity: not a drafted field" in bad.stderr
    malformed = operator.cli("review", "edit", draft_id, "--set", "outcome", check=False)
    assert malformed.returncode == 2 and "is not FIELD=TEXT" in malformed.stderr
    early = operator.cli("review", "edit", draft_id, "--set", "timestamp=1969-07-20", check=False)
    assert (
        early.returncode == 2
        and "timestamp: timestamp 1969-07-20T00:00:00+00:00 is before 1970" in early.stderr
    )

    half = operator.cli("review", "edit", draft_id, "--set", "error_signature=evicted_keys climbing")
    assert "error_signature changed" in half.stdout and "still missing: outcome" in half.stdout
    done = operator.cli("review", "edit", draft_id, "--set", "outcome=Sessions back at 10:05")
    assert f"complete: `recallops review accept {draft_id}`" in done.stdout
    shown = operator.cli("review", "show", draft_id).stdout
    assert "error_signature [edited]" in shown and "evicted_keys climbing" in shown

    accepted = operator.cli("review", "accept", draft_id)
    assert "written to memory: 1" in accepted.stdout
    asked = operator.cli("ask", "users logged out, redis evicted_keys climbing", "--service", "storefront")
    assert accepted.stdout.split(" accepted as ")[1].split()[0] in asked.stdout


def test_an_empty_review_queue_says_how_drafts_get_there(tmp_path: Path) -> None:
    listed = LiveServer(data_dir=tmp_path / "data").cli("review", "list").stdout
    assert listed == (
        "0 pending, 0 accepted, 0 rejected\n"
        "no drafts yet: `recallops import PATH...` drafts post-mortems and tools' exports\n"
    )


def test_a_folder_with_nothing_to_import_says_so_and_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "postmortems"
    (empty / ".git").mkdir(parents=True)
    done = LiveServer(data_dir=tmp_path / "data").cli("import", str(empty), check=False)
    assert done.returncode == 2 and done.stderr.startswith(f"recallops: no file to import in {empty}")


FIRST_CAUSE = "because the pool's health check was disabled in the\n2026-02 release."
DEEPER_CAUSE = "because PgBouncer cached the old primary's address for an hour after the failover."


def _draft_of(listed: str, name: str) -> str:
    return next(line.split()[0] for line in listed.splitlines() if name in line)


def test_a_post_mortem_edited_and_imported_again_replaces_its_incidents_record(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    folder = tmp_path / "postmortems"
    folder.mkdir()
    postmortem = folder / "checkout-db-failover.md"
    shutil.copy(FILES / "checkout-db-failover.md", postmortem)
    operator.cli("import", str(folder), "--by", "dana")
    first = _draft_of(operator.cli("review", "list").stdout, "checkout-db-failover.md")
    public_id = operator.cli("review", "accept", first).stdout.split(" accepted as ")[1].split()[0]

    postmortem.write_text(postmortem.read_text().replace(FIRST_CAUSE, DEEPER_CAUSE))
    held = operator.cli("import", str(folder), "--by", "dana", "--accept-all", check=False)
    assert held.returncode == 1
    assert "new drafts 1, already imported 0, near-duplicates 0, revisions 1" in held.stdout
    assert f"revision of {public_id} (a new version of postmortems/checkout-db-failover.md)" in held.stdout
    listed = operator.cli("review", "list").stdout
    assert f"revision of {public_id}" in listed
    revision = _draft_of(listed, "checkout-db-failover.md")
    shown = operator.cli("review", "show", revision).stdout
    assert f"revision of {public_id}" in shown and "accepting replaces its post-mortem" in shown

    accepted = operator.cli("review", "accept", revision, "--by", "lead")
    assert f"draft {revision} accepted as {public_id}, replacing its post-mortem" in accepted.stdout
    assert "written to memory: 1" in accepted.stdout
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        assert store.execute("SELECT count(*) FROM incidents").fetchone()[0] == 1
        [cause] = store.execute("SELECT root_cause FROM resolutions").fetchone()
    assert "PgBouncer cached the old primary's address" in cause
    assert _memory(tmp_path, public_id)["version"] == "2"
    asked = operator.cli("ask", "checkout 503 psycopg server closed the connection unexpectedly", "--json")
    assert public_id in asked.stdout and "PgBouncer cached the old primary" in asked.stdout
    assert "pool's health check was disabled" not in asked.stdout


def test_accept_all_applies_revisions_when_told_and_a_reused_file_name_is_filed_as_new(
    tmp_path: Path,
) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    postmortem = tmp_path / "checkout-db-failover.md"
    shutil.copy(FILES / "checkout-db-failover.md", postmortem)
    operator.cli("import", str(postmortem), "--accept-all")
    postmortem.write_text(postmortem.read_text().replace(FIRST_CAUSE, DEEPER_CAUSE))
    applied = operator.cli("import", str(postmortem), "--accept-all", "--accept-revisions")
    assert "revisions 1" in applied.stdout and "accepted 1 (written to memory: 1)" in applied.stdout

    postmortem.write_text(postmortem.read_text().replace("18%", "a third"))
    operator.cli("import", str(postmortem))
    pending = _draft_of(operator.cli("review", "list").stdout, "checkout-db-failover.md")
    postmortem.write_text(postmortem.read_text().replace("a third", "a quarter"))
    later = operator.cli("import", str(postmortem)).stdout
    assert f"superseded by a later version of their file (rejected): drafts {pending}" in later
    revision = _draft_of(operator.cli("review", "list").stdout, "checkout-db-failover.md")
    assert revision != pending
    filed = operator.cli("review", "accept", revision, "--as-new")
    assert "replacing" not in filed.stdout
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        assert store.execute("SELECT count(*) FROM incidents").fetchone()[0] == 2
        assert store.execute("SELECT max(version) FROM resolutions").fetchone()[0] == 2


def test_records_a_running_service_delivered_are_in_memory_not_said_to_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running service's worker delivers accepted records as the command does: the command reports
    what memory holds, not only what it wrote itself, and says nothing waits when nothing does."""
    real = memory_cli.drain

    async def delivered_elsewhere(container: Container) -> tuple[int, int, QueueStats]:
        return 0, 0, (await real(container))[2]

    monkeypatch.setattr(memory_cli, "drain", delivered_elsewhere)
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL", "GROQ_API_KEY", "RECALLOPS_GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()

    imported = runner.invoke(app, ["import", str(FILES / "checkout-db-failover.md"), "--accept-all"])
    assert "accepted 1 (written to memory: 1), left for review 0" in imported.stdout, imported.output
    runner.invoke(app, ["import", str(FILES / "search-latency.txt")])
    draft = _draft_of(runner.invoke(app, ["review", "list"]).stdout, "search-latency.txt")
    runner.invoke(app, ["review", "edit", draft, "--set", "service=search", "--set", "outcome=Recovered"])
    runner.invoke(app, ["review", "edit", draft, "--set", "error_signature=p99 4 s"])
    accepted = runner.invoke(app, ["review", "accept", draft, "--by", "oncall"])
    assert "written to memory: 1" in accepted.stdout, accepted.output
    said = imported.stdout + accepted.stdout
    assert "not in memory yet" not in said and "slow or unreachable" not in said
