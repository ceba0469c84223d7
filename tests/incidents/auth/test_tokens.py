"""API tokens: shown once, stored as a hash, scoped, revocable."""

import hashlib

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.auth import tokens
from incidents.auth.models import ApiToken


def test_secret_is_shown_once_and_only_its_hash_is_stored(db: Session) -> None:
    issued = tokens.create_token(db_session=db, name="alertmanager-prod", scopes=["alerts:write"])
    stored = db.scalar(select(ApiToken).where(ApiToken.name == "alertmanager-prod"))
    assert stored is not None
    assert issued.secret.startswith("rops_") and len(issued.secret) > 40
    assert stored.token_hash == hashlib.sha256(issued.secret.encode()).hexdigest()
    assert issued.secret not in (stored.token_hash, stored.prefix)
    assert issued.secret.startswith(stored.prefix)
    live = tokens.verify_token(db_session=db, secret=issued.secret)
    assert live is not None
    assert (live.id, live.name, live.scopes) == (stored.id, "alertmanager-prod", frozenset({"alerts:write"}))
    assert tokens.verify_token(db_session=db, secret=issued.secret + "x") is None
    assert tokens.verify_token(db_session=db, secret="") is None


def test_revoked_tokens_stop_working_and_keep_their_name(db: Session) -> None:
    issued = tokens.create_token(db_session=db, name="ci", scopes=["read", "incidents:write"])
    tokens.revoke_token(db_session=db, name="ci")
    assert tokens.verify_token(db_session=db, secret=issued.secret) is None
    assert tokens.list_tokens(db_session=db) == []
    assert [t.name for t in tokens.list_tokens(db_session=db, include_revoked=True)] == ["ci"]
    with pytest.raises(tokens.TokenError, match="exists already"):
        tokens.create_token(db_session=db, name="ci", scopes=["read"])


@pytest.mark.parametrize(
    ("name", "scopes", "problem"),
    [
        ("x", ["admin"], "unknown scope admin"),
        ("x", [], "at least one scope"),
        ("bad name", ["read"], "name must be"),
        ("", ["read"], "name must be"),
    ],
)
def test_invalid_requests_are_refused(db: Session, name: str, scopes: list[str], problem: str) -> None:
    with pytest.raises(tokens.TokenError, match=problem):
        tokens.create_token(db_session=db, name=name, scopes=scopes)


def test_touch_is_throttled(db: Session) -> None:
    issued = tokens.create_token(db_session=db, name="grafana", scopes=["alerts:write"])
    token = tokens.verify_token(db_session=db, secret=issued.secret)
    assert token is not None and tokens.needs_touch(token)
    touched = tokens.touch(db_session=db, token=token)
    assert not tokens.needs_touch(touched)
    again = tokens.verify_token(db_session=db, secret=issued.secret)
    assert again is not None and not tokens.needs_touch(again)
