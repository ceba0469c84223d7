"""Slack deliveries through the outbox, against a receiver that answers as Slack does."""

import asyncio
import time
from datetime import timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from sqlalchemy import select

from incidents.briefings import service as briefings
from incidents.database import transaction
from incidents.delivery.holds import channel_holds
from incidents.delivery.models import Delivery
from incidents.grades import service as grades
from incidents.incident import service as incidents
from incidents.resolution import service as resolutions
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident, post_mortem
from tests.support.slack import SlackReceiver
from web.app.container import Container
from web.app.notify import deliver
from web.app.notify.deliver import deliver_due

BRIEFING: dict[str, Any] = {
    "summary": "Connection pool exhaustion on checkout, as in INC-2023-0142 [1].",
    "first_checks": [
        {"text": "Check pg_stat_activity for idle-in-transaction sessions [1]", "citations": [1]}
    ],
    "suggested_fix": [{"text": "Raise the pool size and recycle the pods [1]", "citations": [1]}],
    "risky_actions": [{"text": "Do not restart the primary database [2]", "citations": [2]}],
    "related_incidents": [{"id": "INC-2023-0142", "service": "checkout-service", "score": 0.9, "why": "x"}],
    "evidence": [
        {"n": 1, "kind": "incident", "id": "INC-2023-0142", "title": "pool", "text": "..."},
        {"n": 2, "kind": "alert", "id": None, "title": "alert", "text": "..."},
    ],
    "seen_before": "similar",
    "mode": "evidence-only",
}


def brief(container: Container, *, status: str = "triggered", public_id: str = "INC-0001") -> int:
    with transaction(container.sessions) as db:
        incident = make_incident(db, public_id, status=status)
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data=BRIEFING, mode="evidence-only", memory="on"
        )
        return incident.id


def rows(container: Container) -> list[Delivery]:
    with container.sessions() as db:
        return list(db.scalars(select(Delivery).order_by(Delivery.id)))


async def drain(container: Container, within_s: float = 15.0) -> None:
    """Deliver until no row is open, waiting out real backoffs (the first retry comes after 1 s)."""
    deadline = time.monotonic() + within_s
    while any(row.state in ("pending", "failing") for row in rows(container)):
        assert time.monotonic() < deadline, "deliveries still open"
        if (await deliver_due(container.sessions, container.notifier)).attempted == 0:
            await asyncio.sleep(0.05)


async def test_a_webhook_failing_twice_then_ok_gets_exactly_one_valid_message(
    build: Any, slack: SlackReceiver
) -> None:
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url})
    brief(container)
    slack.fail_with((500, None), (429, "0"))
    await drain(container)
    assert slack.attempts == 3
    assert len(slack.messages) == 1 and not slack.invalid
    message = slack.messages[0]
    assert message.blocks[0]["type"] == "header"
    assert "INC-0001" in message.blocks[0]["text"]["text"]
    body = " ".join(str(block) for block in message.blocks)
    assert "pg_stat_activity" in body and "[INC-2023-0142]" in body
    assert "https://recallops.example.org/incidents/INC-0001" in body
    [row] = rows(container)
    assert (row.state, row.attempts, row.last_error) == ("sent", 3, None)


async def test_429_waits_as_long_as_retry_after_says(build: Any, slack: SlackReceiver) -> None:
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url})
    brief(container)
    slack.fail_with((429, "120"))
    report = await deliver_due(container.sessions, container.notifier)
    assert report["failing"] == 1
    [row] = rows(container)
    assert row.state == "failing" and row.last_error == "429 from Slack: rate_limited"
    wait = (row.next_attempt_at - row.created_at).total_seconds()
    assert 119 <= wait <= 125
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 0


async def test_a_4xx_fails_the_row_with_the_error_and_no_secret(build: Any, slack: SlackReceiver) -> None:
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url + "-gone"})
    brief(container)
    report = await deliver_due(container.sessions, container.notifier)
    assert report["failed"] == 1
    [row] = rows(container)
    assert row.state == "failed" and row.last_error is not None
    assert row.last_error.startswith("404 from Slack")
    assert "webhook-secret-path" not in row.last_error
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 0


@pytest.mark.parametrize(
    ("status", "content_type", "body"),
    [
        (200, "text/plain", b"ok"),
        (200, "application/json", b"<html>sign in to the proxy</html>"),
        (200, "text/html", b"<html>sign in to the proxy</html>"),
        (502, "text/html", b"<html>bad gateway</html>"),
    ],
)
async def test_an_answer_that_is_not_slacks_json_is_recorded_and_retried(
    build: Any, slack: SlackReceiver, status: int, content_type: str, body: bytes
) -> None:
    container = build(
        {"name": "oncall", "kind": "slack", "token": "xoxb-t", "channel": "#oncall", "api_url": slack.api_url}
    )
    brief(container)
    slack.answer_raw(status, content_type, body)
    assert (await deliver_due(container.sessions, container.notifier))["failing"] == 1
    [row] = rows(container)
    assert row.state == "failing" and "from Slack" in (row.last_error or "")
    assert "not its JSON" in (row.last_error or "")


async def test_a_sender_that_breaks_leaves_the_row_failing_with_what_broke(
    build: Any, slack: SlackReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url})
    brief(container)

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise KeyError("ts")

    monkeypatch.setattr(deliver, "send", broken)
    assert (await deliver_due(container.sessions, container.notifier))["failing"] == 1
    [row] = rows(container)
    assert (row.state, row.last_error) == ("failing", "unexpected KeyError while sending")


async def test_a_bot_token_threads_updates_under_the_first_message(build: Any, slack: SlackReceiver) -> None:
    container = build(
        {
            "name": "oncall",
            "kind": "slack",
            "token": "xoxb-test-token",
            "channel": "#oncall",
            "api_url": slack.api_url,
        }
    )
    incident_id = brief(container)
    with transaction(container.sessions) as db:
        incident = db.get(incidents.Incident, incident_id)
        assert incident is not None
        briefings.store_briefing(
            db_session=db, incident_id=incident_id, data=BRIEFING, mode="evidence-only", memory="on"
        )
        incidents.acknowledge(db_session=db, incident=incident, actor="dana")
        resolutions.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
    await drain(container)
    assert [m.via for m in slack.messages] == ["api"] * 4 and not slack.invalid
    first, *updates = slack.messages
    assert first.thread_ts is None and first.channel == "#oncall" and first.token == "xoxb-test-token"
    assert all(update.thread_ts == first.ts for update in updates)
    headers = [m.blocks[0]["text"]["text"] for m in slack.messages]
    assert headers[1].startswith("Briefing updated (v2)")
    assert headers[2].startswith("Acknowledged by dana")
    assert headers[3].startswith("Resolved by dana")
    assert [row.event for row in rows(container)] == [
        "briefing_stored",
        "briefing_updated",
        "incident_acknowledged",
        "incident_resolved",
    ]


async def test_routing_rules_pick_the_channels(build: Any, slack: SlackReceiver) -> None:
    container = build(
        {"name": "all", "kind": "slack", "webhook_url": slack.webhook_url},
        {"name": "payments", "kind": "slack", "webhook_url": slack.webhook_url, "services": ["payments"]},
        {"name": "severe", "kind": "slack", "webhook_url": slack.webhook_url, "min_severity": "critical"},
        {
            "name": "closures",
            "kind": "slack",
            "webhook_url": slack.webhook_url,
            "events": ["incident_resolved"],
        },
    )
    brief(container)
    assert sorted(row.channel for row in rows(container)) == ["all", "severe"]


async def test_the_resolved_message_carries_the_grade_stored_before_it_is_sent(
    build: Any, slack: SlackReceiver
) -> None:
    container = build({"name": "closures", "kind": "slack", "webhook_url": slack.webhook_url})
    incident_id = brief(container)
    with transaction(container.sessions) as db:
        incident = db.get(incidents.Incident, incident_id)
        assert incident is not None
        resolutions.resolve(db_session=db, incident=incident, fields=post_mortem(), actor="dana")
        stored = briefings.latest_briefing(db_session=db, incident_id=incident_id)
        assert stored is not None
        grades.store_grade(db_session=db, briefing=stored, score=65, reason="second cause", matched=None)
    await drain(container)
    resolved = [m for m in slack.messages if m.blocks[0]["text"]["text"].startswith("Resolved by dana")]
    assert len(resolved) == 1
    assert "Briefing grade: 65" in str(resolved[0].blocks)


@pytest.mark.parametrize("via", ["webhook", "api"])
@pytest.mark.parametrize("retry_after", ["120", "date"])
async def test_503_with_retry_after_holds_the_whole_channel_as_long_as_it_says(
    build: Any, slack: SlackReceiver, via: str, retry_after: str
) -> None:
    """A receiver down for maintenance that says when to come back (a 503's Retry-After, seconds or an
    HTTP date) is left alone until then, every message of the channel, as a 429's is."""
    channel: dict[str, Any] = {"name": "oncall", "kind": "slack"}
    if via == "webhook":
        channel["webhook_url"] = slack.webhook_url
    else:
        channel.update(token="xoxb-t", channel="#oncall", api_url=slack.api_url)
    container = build(channel)
    brief(container)
    if retry_after == "date":
        retry_after = format_datetime(utcnow() + timedelta(seconds=120), usegmt=True)
    slack.fail_with((503, retry_after))
    assert (await deliver_due(container.sessions, container.notifier))["failing"] == 1
    [row] = rows(container)
    assert row.state == "failing" and (row.last_error or "").startswith("503 from Slack")
    assert 115 <= (row.next_attempt_at - row.created_at).total_seconds() <= 125
    with container.sessions() as db:
        [hold] = channel_holds(db_session=db).values()
    assert hold.channel == "oncall" and 115 <= (hold.until - utcnow()).total_seconds() <= 125
    brief(container, public_id="INC-0002")  # another incident's message waits as well
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 0
    assert slack.attempts == 1 and not slack.messages


async def test_503_without_retry_after_backs_off_and_holds_nothing(build: Any, slack: SlackReceiver) -> None:
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url})
    brief(container)
    slack.fail_with((503, None))
    assert (await deliver_due(container.sessions, container.notifier))["failing"] == 1
    [row] = rows(container)
    assert (row.next_attempt_at - row.created_at).total_seconds() < 5
    with container.sessions() as db:
        assert channel_holds(db_session=db) == {}


async def test_a_refusal_with_retry_after_fails_its_message_and_holds_nothing(
    build: Any, slack: SlackReceiver
) -> None:
    """A 4xx refuses that message for good; its Retry-After does not stop the channel's other messages."""
    container = build({"name": "oncall", "kind": "slack", "webhook_url": slack.webhook_url})
    brief(container)
    slack.fail_with((400, "3600"))
    assert (await deliver_due(container.sessions, container.notifier))["failed"] == 1
    with container.sessions() as db:
        assert channel_holds(db_session=db) == {}
    brief(container, public_id="INC-0002")
    assert (await deliver_due(container.sessions, container.notifier))["sent"] == 1
    assert [m.text.split(" ")[0] for m in slack.messages] == ["INC-0002"]
