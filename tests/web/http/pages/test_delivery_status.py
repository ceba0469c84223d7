"""The incident page says where its messages went, per channel, and never shows a channel's address."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from incidents.database import transaction
from incidents.delivery import outbox
from incidents.delivery.models import Delivery
from tests.web.http.pages.conftest import Site
from tests.web.http.pages.test_incident_pages import _store_briefing
from web.app.settings import Settings
from web.http.app import create_app

SECRET_HOOK = "https://hooks.slack.com/services/T1/B2/never-on-a-page"


@pytest.fixture
def notifying_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    for name in ("GROQ_API_KEY", "DATABASE_URL", "RECALLOPS_DATABASE_URL", "RECALLOPS_SSO_HEADER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALLOPS_RUN_WORKER", "false")
    channels = [
        {"name": "oncall", "kind": "slack", "token": "xoxb-never-shown", "channel": "#oncall"},
        {"name": "legacy", "kind": "slack", "webhook_url": SECRET_HOOK},
        {"name": "audit", "kind": "webhook", "url": "https://audit.example.org/hook?key=never-shown-either"},
    ]
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps(channels))
    with TestClient(create_app(Settings())) as client:
        yield Site(client)


def test_each_channel_shows_sent_failing_or_pending_without_secrets(notifying_site: Site) -> None:
    site = notifying_site
    public_id = site.open_incident()
    _store_briefing(site, public_id)
    with site.container.sessions() as db:
        assert {row.channel for row in db.scalars(select(Delivery))} == {"oncall", "legacy", "audit"}
    with transaction(site.container.sessions) as db:
        claims = {c.channel: c for c in outbox.claim_due(db_session=db, limit=10, lease_s=60)}
        outbox.complete(db_session=db, claim=claims["oncall"], ref="1700.1")
        outbox.fail(
            db_session=db,
            claim=claims["legacy"],
            error="404 from Slack: no_service",
            retry=False,
            retry_for_s=1800,
        )
    site.add_user("ana")
    site.sign_in("ana")
    page = site.client.get(f"/incidents/{public_id}").text
    assert "sent to <strong>#oncall</strong>" in page
    assert "failed to reach <strong>Slack incoming webhook</strong>: 404 from Slack: no_service" in page
    assert "sending to <strong>webhook https://audit.example.org/…</strong>" in page
    for secret in ("xoxb-never-shown", "never-on-a-page", "never-shown-either"):
        assert secret not in page
