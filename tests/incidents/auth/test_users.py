"""User accounts: argon2id hashes, sign-in checks, disabling, and sessions that end with a new password."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from incidents.auth import users

PASSWORD = "correct horse battery"


def test_stores_an_argon2id_hash_never_the_password(db: Session) -> None:
    user = users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    assert user.password_hash is not None
    assert user.password_hash.startswith("$argon2id$")
    assert PASSWORD not in user.password_hash


def test_authenticate_accepts_only_the_right_password(db: Session) -> None:
    users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    assert users.authenticate(db_session=db, name="ana", password=PASSWORD).name == "ana"
    assert users.authenticate(db_session=db, name="ana", password=PASSWORD + "x") is None
    assert users.authenticate(db_session=db, name="nobody", password=PASSWORD) is None


def test_disabled_and_sso_only_users_cannot_sign_in_with_a_password(db: Session) -> None:
    users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    users.add_user(db_session=db, name="sso.bob", role="viewer", password=None)
    users.disable_user(db_session=db, name="ana")
    assert users.authenticate(db_session=db, name="ana", password=PASSWORD) is None
    assert users.authenticate(db_session=db, name="sso.bob", password=PASSWORD) is None


def test_a_name_no_account_could_have_is_never_looked_up(db: Session) -> None:
    users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    for name in ("an\x00a", "a" * 300, "ana\udcff"):
        assert users.authenticate(db_session=db, name=name, password=PASSWORD) is None


def test_set_password_replaces_the_old_one(db: Session) -> None:
    users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    users.set_password(db_session=db, name="ana", password="another long secret")
    assert users.authenticate(db_session=db, name="ana", password=PASSWORD) is None
    assert users.authenticate(db_session=db, name="ana", password="another long secret") is not None


@pytest.mark.parametrize(
    ("name", "role", "password", "problem"),
    [
        ("ana", "admin", PASSWORD, "role must be one of"),
        ("", "viewer", PASSWORD, "name must be"),
        ("<script>", "viewer", PASSWORD, "name must be"),
        ("ana", "viewer", "short", "at least 10 characters"),
    ],
)
def test_rejects_bad_accounts_with_a_reason(
    db: Session, name: str, role: str, password: str, problem: str
) -> None:
    with pytest.raises(users.UserError, match=problem):
        users.add_user(db_session=db, name=name, role=role, password=password)


def test_names_are_unique(db: Session) -> None:
    users.add_user(db_session=db, name="ana", role="viewer", password=PASSWORD)
    with pytest.raises(users.UserError, match="already exists"):
        users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)


def test_list_and_unknown_names(db: Session) -> None:
    users.add_user(db_session=db, name="zoe", role="viewer", password=PASSWORD)
    users.add_user(db_session=db, name="ana", role="engineer", password=PASSWORD)
    assert [u.name for u in users.list_users(db_session=db)] == ["ana", "zoe"]
    with pytest.raises(users.UserError, match="no user named"):
        users.disable_user(db_session=db, name="ghost")


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(password=st.text(min_size=10, max_size=60))
def test_any_password_round_trips_through_its_hash(password: str) -> None:
    hashed = users.hash_password(password)
    assert hashed != password
    assert users.verify_password(hashed, password)
    assert not users.verify_password(hashed, password + "!")
