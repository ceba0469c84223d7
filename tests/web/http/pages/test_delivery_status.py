"""The incident page and its API say where its messages went, per channel, and never a channel's address."""

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from incidents.auth.tokens import create_token
from incidents.briefings import service as briefing_service
from incidents.briefings.models import Job
from incidents.database import transaction
from incidents.delivery import outbox
from incidents.delivery.models import Delivery, DeliveryChannel
from incidents.incident.models import Incident
from incidents.timeutil import utcnow
from tests.web.http.pages.conftest import Site
from tests.web.http.pages.test_incident_pages import _store_briefing
from web.app.settings import Settings
from web.http.app import create_app

SECRET_HOOK = "https://hooks.slack.com/services/T1/B2/never-on-a-page"
LEGACY_LABEL = "Slack incoming webhook"
AUDIT_LABEL = "webhook https://audit.example.org/…"
# How a line names each channel: its label, then its name.
ONCALL = '<strong>#oncall</strong> <span class="muted">(oncall)</span>'
LEGACY = '<strong>Slack incoming webhook</strong> <span class="muted">(legacy)</span>'
AUDIT = '<strong>webhook https://audit.example.org/…</strong> <span class="muted">(audit)</span>'


@pytest.fixture
def notifying_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    for name in ("GROQ_API_KEY", "DATABASE_URL", "RECALLOPS_DATABASE_URL", "RECALLOPS_SSO_HEADER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALLOPS_RUN_WORKER", "false")
    channels = [
        {"name": "oncall", "kind": "slack", "token": "xoxb-never-shown", "channel": "#oncall"},
        {"name": "legacy", "kind": "slack", "webhook_url": SECRET_HOOK},
        {"name": "billing-hook", "kind": "slack", "webhook_url": SECRET_HOOK + "-2", "services": ["billing"]},
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
    assert f"sent to {ONCALL}" in page
    assert f"failed to reach {LEGACY}, last error at <time" in page
    assert "): 404 from Slack: no_service; not tried again until" in page
    assert f"sending to {AUDIT}" in page
    for secret in ("xoxb-never-shown", "never-on-a-page", "never-shown-either"):
        assert secret not in page


def _briefed(site: Site, public_id: str) -> None:
    """The incident's briefing made as the worker makes it: its job claimed, the briefing stored, done."""
    with transaction(site.container.sessions) as db:
        [job] = briefing_service.claim_due_jobs(db_session=db)
    _store_briefing(site, public_id)
    with transaction(site.container.sessions) as db:
        briefing_service.complete_job(db_session=db, job=db.get_one(Job, job.id))


def _send_due(site: Site, outcomes: dict[str, tuple[str, float | None]]) -> None:
    """Claim what is due and record, per channel, its receiver's answer: an error and a Retry-After,
    or "sent" (a channel not named stays as it is)."""
    with transaction(site.container.sessions) as db:
        for claim in outbox.claim_due(db_session=db, limit=10, lease_s=60):
            error, retry_after_s = outcomes.get(claim.channel, ("", None))
            if error == "sent":
                outbox.complete(db_session=db, claim=claim, ref=None)
            elif error:
                outbox.fail(
                    db_session=db,
                    claim=claim,
                    error=error,
                    retry=error.startswith(("429", "503")),
                    retry_after_s=retry_after_s,
                    retry_for_s=1800,
                )
            else:
                outbox.MESSAGES.release(db, claim.lease)


def test_a_channel_its_receiver_holds_says_until_when_and_what_it_answered_to_a_viewer(
    notifying_site: Site,
) -> None:
    """Slack answered another incident's briefing with a 429 and Retry-After: this incident's briefing
    waits for that time, and its page says so rather than "sending" for the next five minutes."""
    site = notifying_site
    first = site.open_incident(summary="Checkout p99 latency above 2s")
    _briefed(site, first)
    _send_due(site, {"oncall": ("429 from Slack (ratelimited)", 300), "legacy": ("sent", None)})
    second = site.open_incident(summary="Payments 5xx above 5%", service="payments")
    _briefed(site, second)
    with site.container.sessions() as db:
        [until] = db.scalars(select(DeliveryChannel.held_until).where(DeliveryChannel.name == "oncall"))
    assert until is not None
    site.signed_in("vic", role="viewer")

    page = site.client.get(f"/incidents/{second}").text
    stamp = until.isoformat(timespec="seconds")
    assert f'{ONCALL} asked to wait until <time datetime="{stamp}">' in page
    assert re.search(
        r", answering at <time [^>]+>[^<]+</time> \(\d+ s ago\): 429 from Slack \(ratelimited\)\. ", page
    )
    assert "1 message waits; nothing goes to it before then." in page
    assert f"sending to {ONCALL}" not in page
    assert f"sending to {LEGACY}" in page  # another channel, not held

    _send_due(site, {"legacy": ("sent", None), "audit": ("sent", None)})
    page = site.client.get(f"/incidents/{second}").text
    assert '<div id="incident-live" data-refresh="15">' in page  # not every 2 s for the whole wait
    assert "delivery-held" in page and "delivery-pending" not in page


def test_a_failing_or_failed_channel_says_when_the_receiver_answered(notifying_site: Site) -> None:
    site = notifying_site
    public_id = site.open_incident()
    _briefed(site, public_id)
    _send_due(site, {"oncall": ("503 from Slack", None), "legacy": ("404 from Slack: no_service", None)})
    with site.container.sessions() as db:
        when = {row.channel: row.last_error_at for row in db.scalars(select(Delivery))}
    site.signed_in("vic", role="viewer")
    page = site.client.get(f"/incidents/{public_id}").text
    for label, error, channel in (
        (f"failing to reach {ONCALL}", "503 from Slack", "oncall"),
        (f"failed to reach {LEGACY}", "404 from Slack: no_service", "legacy"),
    ):
        at = when[channel]
        assert at is not None
        stamp = re.escape(f'<time datetime="{at.isoformat(timespec="seconds")}">')
        # the time first: "... too many requests at 07:43" would read as the receiver's words
        said = re.escape(f": {error};")
        assert re.search(f"{re.escape(label)}, last error at {stamp}[^<]+</time> [(][^)]+[)]{said}", page)
    assert 'not tried again until <span class="mono">recallops notify retry legacy</span>' in page


def test_while_the_briefing_is_made_the_page_says_where_it_goes_and_which_channel_holds_it(
    notifying_site: Site,
) -> None:
    site = notifying_site
    earlier = site.open_incident(summary="Checkout p99 latency above 2s")
    _briefed(site, earlier)
    _send_due(site, {"oncall": ("429 from Slack (ratelimited)", 300)})
    public_id = site.open_incident(summary="Payments 5xx above 5%", service="payments")
    site.signed_in("vic", role="viewer")

    page = site.client.get(f"/incidents/{public_id}").text
    assert '<div id="incident-live" data-refresh="1">' in page  # the briefing poll
    assert f"{ONCALL} asked to wait until" in page
    assert "The briefing will wait; nothing goes to it before then." in page
    assert f"the briefing goes to {LEGACY} once it is made" in page
    assert f"the briefing goes to {AUDIT} once it is made" in page

    _briefed(site, public_id)
    page = site.client.get(f"/incidents/{public_id}").text
    assert "once it is made" not in page
    assert f"sending to {LEGACY} (1 owed)" in page
    assert "1 message waits; nothing goes to it before then." in page


def test_two_channels_with_the_same_label_are_told_apart_by_name(notifying_site: Site) -> None:
    """Two Slack incoming webhooks are both "Slack incoming webhook": the line names the channel too."""
    site = notifying_site
    public_id = site.open_incident(summary="Invoice run stalled", service="billing")
    _briefed(site, public_id)
    _send_due(site, {"billing-hook": ("429 from Slack (rate_limited)", 60), "legacy": ("sent", None)})
    site.signed_in("vic", role="viewer")
    page = site.client.get(f"/incidents/{public_id}").text
    assert (
        '<strong>Slack incoming webhook</strong> <span class="muted">(billing-hook)</span> asked to wait'
        in page
    )
    assert f"sent to {LEGACY}" in page


def test_a_failing_message_already_due_says_its_next_try_is_due_not_minutes_ago(notifying_site: Site) -> None:
    """A due row waits for a worker to claim it (a busy lane, a worker restarting): its try is due."""
    site = notifying_site
    public_id = site.open_incident()
    _briefed(site, public_id)
    _send_due(site, {"oncall": ("503 from Slack", None)})
    with transaction(site.container.sessions) as db:
        row = db.scalars(select(Delivery).where(Delivery.channel == "oncall")).one()
        row.next_attempt_at = utcnow() - timedelta(minutes=3)
    site.signed_in("vic", role="viewer")
    page = site.client.get(f"/incidents/{public_id}").text
    assert "503 from Slack; next try due now" in page
    assert "next try 3 min ago" not in page


def _opened_while_oncall_is_held(site: Site) -> str:
    """A payments incident opened after Slack answered an earlier briefing with a 429 for five minutes."""
    earlier = site.open_incident(summary="Checkout p99 latency above 2s")
    _briefed(site, earlier)
    _send_due(site, {"oncall": ("429 from Slack (ratelimited)", 300), "legacy": ("sent", None)})
    return site.open_incident(summary="Payments 5xx above 5%", service="payments")


def _api(site: Site, public_id: str, headers: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The incident API's delivery section, by channel."""
    response = site.client.get(f"/api/v1/incidents/{public_id}", headers=headers)
    assert response.status_code == 200, response.text
    return {line["channel"]: line for line in response.json()["delivery"]}


def test_the_incident_api_says_which_channel_got_the_briefing_which_fails_and_which_is_held(
    notifying_site: Site,
) -> None:
    """A bot holding a read-only token tells whether Slack got the briefing, and why not."""
    site = notifying_site
    public_id = _opened_while_oncall_is_held(site)
    _briefed(site, public_id)
    _send_due(site, {"legacy": ("sent", None), "audit": ("503 from the webhook: busy", None)})
    with transaction(site.container.sessions) as db:
        secret = create_token(db_session=db, name="chatops-bot", scopes=["read"]).secret
        mine = select(Delivery).join(Incident, Incident.id == Delivery.incident_id)
        rows = {row.channel: row for row in db.scalars(mine.where(Incident.public_id == public_id))}
        [until] = db.scalars(select(DeliveryChannel.held_until).where(DeliveryChannel.name == "oncall"))

    lines = _api(site, public_id, {"Authorization": f"Bearer {secret}"})

    assert set(lines) == {"oncall", "legacy", "audit"}
    sent, failing, held = lines["legacy"], lines["audit"], lines["oncall"]
    assert (sent["state"], sent["label"], sent["sent"], sent["owed"]) == ("sent", LEGACY_LABEL, 1, 0)
    assert sent["last_sent_at"] is not None and sent["error"] is None
    assert (failing["state"], failing["label"], failing["owed"]) == ("failing", AUDIT_LABEL, 1)
    assert failing["error"] == "503 from the webhook: busy"
    assert _when(failing["error_at"]) == rows["audit"].last_error_at
    assert _when(failing["next_attempt_at"]) == rows["audit"].next_attempt_at
    assert (held["state"], held["label"], held["owed"]) == ("held", "#oncall", 1)
    assert held["hold"]["reason"] == "429 from Slack (ratelimited)"
    assert _when(held["hold"]["until"]) == until
    for secret_part in ("xoxb-never-shown", "never-on-a-page", "never-shown-either"):
        assert secret_part not in json.dumps(lines)


def test_the_page_and_the_api_give_each_channel_the_same_state_while_briefing_and_after(
    notifying_site: Site,
) -> None:
    site = notifying_site
    coming = _opened_while_oncall_is_held(site)
    site.signed_in("vic", role="viewer")

    def states(public_id: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        page = site.client.get(f"/incidents/{public_id}").text
        shown = re.findall(r'class="delivery delivery-(\w+)">.*?<strong>([^<]+)</strong>', page, re.DOTALL)
        told = [(line["state"], line["label"]) for line in _api(site, public_id).values()]
        return shown, told

    shown, told = states(coming)
    assert shown == told
    assert {state for state, _ in told} == {"held", "upcoming"}

    _briefed(site, coming)
    _send_due(site, {"legacy": ("sent", None), "audit": ("404 from the webhook: gone", None)})
    shown, told = states(coming)
    assert shown == told
    assert {state for state, _ in told} == {"held", "sent", "failed"}


def _when(value: str | None) -> datetime | None:
    """A time as the API writes it, read back to compare with the row's."""
    if value is None:
        return None
    return datetime.fromisoformat(value)
