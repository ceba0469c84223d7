"""Receivers are untrusted: a total deadline cuts off one that drips, and what one answers is checked."""

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from pydantic import SecretStr
from sqlalchemy import select

from incidents.delivery.models import Delivery
from incidents.delivery.routing import TEST
from incidents.timeutil import utcnow
from tests.support.chaos import ChaosReceiver, Mode
from tests.support.net import wait_for
from tests.support.smtp import Mailbox, SmtpServer
from tests.web.app.notify.test_slack import brief
from web.app.container import Container
from web.app.deadline import MAX_THREADS
from web.app.notify.config import AppriseChannel
from web.app.notify.deliver import deliver_due
from web.app.notify.render import compose
from web.app.notify.senders import SendError, send

NO_INCIDENT = dict.fromkeys(("public_id", "service", "severity", "status", "title"), "")


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[ChaosReceiver]:
    mode: Mode = request.param
    chaos = ChaosReceiver(mode, drip_s=0.3).start()
    yield chaos
    chaos.stop()


def only_row(container: Container) -> Delivery:
    with container.sessions() as db:
        [row] = db.scalars(select(Delivery))
        return row


def webhook(container_of: Any, receiver: ChaosReceiver, monkeypatch: pytest.MonkeyPatch) -> Container:
    monkeypatch.setenv("RECALLOPS_NOTIFY_RETRY_WINDOW_S", "2")
    container: Container = container_of({"name": "hook", "kind": "webhook", "url": receiver.url})
    container.notifier.settings.notify_timeout_s = 1.0
    return container


@pytest.mark.parametrize("receiver", ["nan"], indirect=True)
async def test_retry_after_nan_backs_off_and_the_row_ends_failed_within_its_budget(
    build: Any, receiver: ChaosReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = webhook(build, receiver, monkeypatch)
    brief(container)
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 1
    row = only_row(container)
    assert row.state == "failing" and row.attempts == 1 and row.locked_until is None
    assert row.created_at < row.next_attempt_at < utcnow() + timedelta(seconds=2)  # the backoff, not nan
    error = row.last_error or ""
    assert error.startswith("429 from the webhook") and error.isprintable() and len(error) < 300

    def ended() -> bool:
        asyncio.run(deliver_due(container.sessions, container.notifier))
        return only_row(container).state == "failed"

    await asyncio.to_thread(wait_for, ended, timeout=30, interval=0.2, what="the row to use its budget")
    assert only_row(container).attempts == receiver.requests >= 2


@pytest.mark.parametrize("receiver", ["drip", "hang"], indirect=True)
async def test_a_receiver_that_drips_or_hangs_is_cut_off_and_its_connection_closed(
    build: Any, receiver: ChaosReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = webhook(build, receiver, monkeypatch)
    brief(container)
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 1
    # The deadline ended the work, not only the wait: the sender is gone from the receiver.
    await asyncio.to_thread(
        wait_for, lambda: receiver.open_connections == 0, timeout=10, what="the connection closed"
    )
    row = only_row(container)
    assert row.state == "failing" and "no complete answer within 1s" in (row.last_error or "")


def test_a_receivers_words_are_kept_printable_on_one_line_and_short() -> None:
    from web.app.notify.senders import receiver_text

    said = receiver_text("line one\r\n\x1b[31mred\x00" + "x" * 1000)
    assert said.isprintable() and said.startswith("line one [31mred") and len(said) == 200
    assert receiver_text("fine") == "fine"


@pytest.mark.parametrize("receiver", ["nan"], indirect=True)
async def test_a_row_for_a_channel_this_replica_lacks_waits_for_one_that_has_it(
    build: Any, receiver: ChaosReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rolling change of the channels: the replica that claimed the row has not got the channel yet."""
    container = webhook(build, receiver, monkeypatch)
    brief(container)
    hook = container.notifier.channels.pop("hook")
    assert (await deliver_due(container.sessions, container.notifier)).attempted == 1
    row = only_row(container)
    assert row.state == "failing" and "not configured on this replica" in (row.last_error or "")
    assert receiver.requests == 0
    container.notifier.channels["hook"] = hook  # the replica that has it, once the backoff is over

    def sent_to_it() -> bool:
        asyncio.run(deliver_due(container.sessions, container.notifier))
        return receiver.requests == 1

    await asyncio.to_thread(
        wait_for, sent_to_it, timeout=30, interval=0.2, what="the row sent by its channel"
    )


async def test_a_hung_email_receiver_uses_up_its_own_channels_calls_and_no_others() -> None:
    """Apprise's sends of one channel never queue another's: each has threads of its own, capped."""
    hung = ChaosReceiver("silent").start()
    mail = SmtpServer().start()
    try:
        stuck_url = SmtpServer(port=hung.port).apprise_url()
        stuck_mail = AppriseChannel(name="hung", kind="apprise", url=SecretStr(stuck_url))
        healthy = AppriseChannel(name="mail", kind="apprise", url=SecretStr(mail.apprise_url()))
        notice = compose(event=TEST, incident=NO_INCIDENT, payload={}, briefing=None, link=None)
        stuck = await asyncio.gather(
            *(send(stuck_mail, notice, delivery_id=n, thread=None, timeout_s=1.0) for n in range(40)),
            return_exceptions=True,
        )
        assert all(isinstance(outcome, SendError) and outcome.retry for outcome in stuck)
        assert hung.accepted <= MAX_THREADS  # the cap holds however many calls start at once
        await send(healthy, notice, delivery_id=41, thread=None, timeout_s=5.0)
        assert "If you can read this" in Mailbox.text(mail.mailbox.messages[0])
    finally:
        hung.stop()
        mail.stop()


@dataclass
class Refusing(Mailbox):
    """A mail server that answers every message with one reply."""

    reply: str = ""

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        return self.reply


@pytest.mark.parametrize(
    ("reply", "retry"), [("554 5.7.1 Rejected as spam", False), ("451 4.3.0 Try again later", True)]
)
async def test_an_email_refused_for_good_fails_at_once_and_says_why(
    reply: str, retry: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="apprise")  # as the server's logging leaves it
    mail = SmtpServer(mailbox=Refusing(reply=reply)).start()
    try:
        channel = AppriseChannel(name="mail", kind="apprise", url=SecretStr(mail.apprise_url()))
        notice = compose(event=TEST, incident=NO_INCIDENT, payload={}, briefing=None, link=None)
        with pytest.raises(SendError) as refused:
            await send(channel, notice, delivery_id=1, thread=None, timeout_s=5.0)
    finally:
        mail.stop()
    assert refused.value.retry is retry
    assert str(refused.value) == f"{reply[:3]} from the mail server: {reply[4:]}"


async def test_a_long_non_ascii_title_reaches_email_with_its_subject_clipped() -> None:
    mail = SmtpServer().start()
    try:
        channel = AppriseChannel(name="mail", kind="apprise", url=SecretStr(mail.apprise_url()))
        incident = {**NO_INCIDENT, "public_id": "INC-0001", "title": "決済の遅延" * 60}
        notice = compose(event="briefing_stored", incident=incident, payload={}, briefing=None, link=None)
        await send(channel, notice, delivery_id=1, thread=None, timeout_s=5.0)
    finally:
        mail.stop()
    [message] = mail.mailbox.messages
    assert message["Subject"].startswith("INC-0001") and message["Subject"].endswith("遅延…")
