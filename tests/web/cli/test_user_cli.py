"""``recallops user``, run as an operator would: add, list, passwd, role, disable, with clear errors."""

from pathlib import Path

from sqlalchemy import select

from incidents.auth import users
from incidents.auth.models import User
from incidents.database import make_engine, make_session_factory
from tests.support.server import LiveServer

PASSWORD = "a long enough password"


def _user(data_dir: Path, name: str) -> User:
    engine = make_engine(f"sqlite:///{data_dir / 'recallops.db'}")
    try:
        with make_session_factory(engine)() as db:
            user = db.scalar(select(User).where(User.name == name))
            assert user is not None
            return user
    finally:
        engine.dispose()


def test_user_lifecycle(tmp_path: Path) -> None:
    ops = LiveServer(tmp_path)
    assert (
        "user dana added (engineer)"
        in ops.cli("user", "add", "dana", "--role", "engineer", "--password", PASSWORD).stdout
    )
    generated = ops.cli("user", "add", "lee", "--role", "viewer").stdout  # no terminal: generated, shown once
    password = generated.split("password: ", 1)[1].strip()
    assert users.verify_password(_user(tmp_path, "lee").password_hash or "", password)
    assert "SSO only" in ops.cli("user", "add", "sam", "--role", "viewer", "--sso").stdout
    assert _user(tmp_path, "sam").password_hash is None

    listing = ops.cli("user", "list").stdout.splitlines()
    assert [line.split("\t")[:3] for line in listing] == [
        ["dana", "engineer", "active"],
        ["lee", "viewer", "active"],
        ["sam", "viewer", "sso"],
    ]
    assert "lee is now engineer" in ops.cli("user", "role", "lee", "engineer").stdout
    before = _user(tmp_path, "dana").password_hash
    ops.cli("user", "passwd", "dana", "--password", "another long password")
    assert _user(tmp_path, "dana").password_hash != before
    ops.cli("user", "disable", "lee")
    assert "lee\tengineer\tdisabled" in ops.cli("user", "list").stdout
    assert "dana signed out of 0 sessions" in ops.cli("user", "signout", "dana").stdout


def test_errors_name_the_problem_in_one_line_and_exit_2(tmp_path: Path) -> None:
    ops = LiveServer(tmp_path)
    ops.cli("user", "add", "dana", "--role", "engineer", "--password", PASSWORD)
    cases = [
        (("user", "add", "dana", "--role", "viewer", "--password", PASSWORD), "already exists"),
        (("user", "disable", "ghost"), "no user named 'ghost'"),
        (("user", "role", "dana", "root"), "role must be one of"),
    ]
    for args, message in cases:
        done = ops.cli(*args, check=False)
        assert done.returncode == 2, args
        assert done.stderr.startswith("recallops: ") and message in done.stderr, (args, done.stderr)
