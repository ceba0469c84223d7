"""``recallops demo``: the Meridian Commerce history, two accounts and a sender token, ready to try."""

import json
from datetime import UTC, datetime

import typer

from web.cli.common import ALLOW_OTHER_MEMORY, cli_session
from web.cli.history import seed

DEMO_USERS = (("oncall", "engineer"), ("viewer", "viewer"))
DEMO_TOKEN_PREFIX = "demo-sender-"
# The alert the README posts: the demo history knows its cause (INC-2025-014, the checkout pool).
DEMO_ALERT = {
    "service": "checkout-service",
    "title": "Checkout p99 latency over 2s",
    "description": "remaining connection slots are reserved; pool timeout acquiring connection",
    "severity": "critical",
}


def demo(allow_other_memory: bool = ALLOW_OTHER_MEMORY) -> None:
    """Seed the demo history and print how to sign in and post an alert (new passwords each run)."""
    from incidents.auth import tokens, users
    from web.app.notify.config import NotifySettings
    from web.app.settings import WebSettings

    seed(directory=None, allow_other_memory=allow_other_memory)
    passwords: dict[str, str] = {}
    with cli_session() as session:
        for name, role in DEMO_USERS:
            password = users.generate_password()
            if users.get_user(db_session=session, name=name) is None:
                users.add_user(db_session=session, name=name, role=role, password=password)
            else:
                users.set_password(db_session=session, name=name, password=password)
            passwords[name] = password
        for token in tokens.list_tokens(db_session=session):
            if token.name.startswith(DEMO_TOKEN_PREFIX):
                tokens.revoke_token(db_session=session, name=token.name)
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        issued = tokens.create_token(
            db_session=session, name=f"{DEMO_TOKEN_PREFIX}{stamp}", scopes=["alerts:write", "read"]
        )
    web = WebSettings()
    # The address people reach (RECALLOPS_PUBLIC_URL, as chat links use it), else the served one.
    base = (NotifySettings().public_url or f"http://{web.host}:{web.port}").rstrip("/")
    typer.echo(
        f"""
RecallOps demo is ready. Once the server is up, open {base}/ and sign in:
  engineer  oncall / {passwords["oncall"]}
  viewer    viewer / {passwords["viewer"]}

Post an alert (the token is shown once; `recallops token create` makes more):
  curl -sS -X POST {base}/api/v1/alerts \\
    -H 'Authorization: Bearer {issued.secret}' -H 'Content-Type: application/json' \\
    -d '{json.dumps(DEMO_ALERT)}'
"""
    )
