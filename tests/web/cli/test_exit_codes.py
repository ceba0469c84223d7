"""Every command keeps the exit codes its help lists: input it cannot use (an option that does not parse,
a name that does not exist, a path with nothing to read) is one line starting ``recallops:`` and exit 2,
so a script tells it from a run that found failures (exit 1) by the code alone. Bad settings are
covered in test_errors, runs that find failures beside each command."""

from pathlib import Path

import pytest

from tests.support.server import LiveServer

NOWHERE = "/nonexistent/recallops"


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """One empty installation for every case: they all fail before writing anything."""
    return LiveServer(tmp_path_factory.mktemp("exit-codes") / "data")


@pytest.fixture(scope="module")
def empty_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nothing-to-import")


@pytest.mark.parametrize(
    ("command", "names"),
    [
        # an option or argument that does not parse
        (["grades", "--since", "yesterday"], "--since: 'yesterday' is neither"),
        (["review", "list", "--state", "done"], "--state: 'done' is none of pending"),
        (["review", "list", "--limit", "many"], "'--limit'"),
        (["ask", "disk full", "--memory", "maybe"], "'maybe' is not one of 'on', 'off'"),
        (["memory", "sync", "--retry"], "no such option: --retry"),
        (["db", "upgrad"], "no such command 'upgrad'"),
        (["user", "add", "dana"], "missing option '--role'"),
        (["bench", "recall", "--sizes", "many"], "--sizes: 'many' is not sizes like"),
        (["bench", "recall", "--sizes", "0"], "--sizes: '0' is not sizes like"),
        (
            ["profile", "refresh", "--timeout", "-5"],
            "'--timeout': Input should be greater than or equal to 1",
        ),
        (["bench", "replay"], "nothing to replay"),
        (["eval", "--only", "no-such-scenario"], "--only: no scenario with the id"),
        # a name that does not exist
        (["review", "show", "99"], "no draft 99"),
        (["review", "accept", "99"], "no draft 99"),
        (["replay", "INC-9999"], "no incident 'INC-9999'"),
        (["resolve-draft", "INC-9999", "--notes", "Root cause: x", "--as", "dana"], "no incident 'INC-9999'"),
        (["user", "role", "nobody", "viewer"], "no user named 'nobody'"),
        (["user", "add", "dana", "--role", "admin"], "role must be one of engineer, viewer"),
        (["token", "revoke", "nobody"], "no token named 'nobody'"),
        (["notify", "retry", "nosuch"], "no channel 'nosuch' is configured"),
        (["profile", "show", "--service", "nosuch"], "no incident is on service 'nosuch'"),
        # a path with nothing to read
        (["import", NOWHERE], f"path '{NOWHERE}' does not exist"),
        (["import", "{empty}"], "no file to import in "),
        (["seed", "--dir", NOWHERE], f"cannot read {NOWHERE}"),
        (["eval", "--scenarios", NOWHERE], f"dir '{NOWHERE}' does not exist"),
    ],
)
def test_input_a_command_cannot_use_is_one_line_and_exit_2(
    operator: LiveServer, empty_folder: Path, command: list[str], names: str
) -> None:
    done = operator.cli(*(arg.format(empty=empty_folder) for arg in command), check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("recallops: ") and names in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and "Usage:" not in done.stderr


def test_the_help_lists_the_exit_codes(operator: LiveServer) -> None:
    shown = " ".join(operator.cli("--help").stdout.split())
    for code in (
        "Exit codes: 0 when done.",
        "1: the command ran and reports a failure",
        "2: the command could not use",
    ):
        assert code in shown
