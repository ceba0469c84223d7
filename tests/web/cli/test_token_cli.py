"""``recallops token``, run as an operator would: create (secret once, on stdout), list, revoke."""

import hashlib
import json
from pathlib import Path

from sqlalchemy import select

from incidents.auth.models import ApiToken
from incidents.database import make_engine, make_session_factory
from tests.support.server import LiveServer


def _stored(data_dir: Path) -> list[ApiToken]:
    engine = make_engine(f"sqlite:///{data_dir / 'recallops.db'}")
    try:
        with make_session_factory(engine)() as db:
            return list(db.scalars(select(ApiToken).order_by(ApiToken.name)))
    finally:
        engine.dispose()


def test_token_lifecycle(tmp_path: Path) -> None:
    ops = LiveServer(tmp_path)
    created = ops.cli("token", "create", "--name", "am-prod", "--scope", "alerts:write", "--scope", "read")
    secret = created.stdout.strip()
    assert secret.startswith("rops_") and "\n" not in secret  # stdout is the secret alone: scriptable
    assert "cannot be shown again" in created.stderr
    [token] = _stored(tmp_path)
    assert token.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert token.scopes == ["alerts:write", "read"]

    listing = json.loads(ops.cli("token", "list", "--json").stdout)
    assert [(t["name"], t["scopes"], t["revoked_at"]) for t in listing] == [
        ("am-prod", ["alerts:write", "read"], None)
    ]
    assert secret not in ops.cli("token", "list").stdout

    assert "revoked" in ops.cli("token", "revoke", "am-prod").stdout
    assert ops.cli("token", "list").stdout.strip() == (
        "no tokens; create one with: recallops token create --name NAME --scope read"
    )
    assert "revoked" in ops.cli("token", "list", "--all").stdout

    again = ops.cli("token", "create", "--name", "am-prod", "--scope", "read", check=False)
    assert again.returncode == 2 and "exists already" in again.stderr
    bad_scope = ops.cli("token", "create", "--name", "x", "--scope", "admin", check=False)
    assert bad_scope.returncode == 2 and "unknown scope admin" in bad_scope.stderr
    missing = ops.cli("token", "revoke", "nobody", check=False)
    assert missing.returncode == 2 and "no token named 'nobody'" in missing.stderr
