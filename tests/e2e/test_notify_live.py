"""Deliveries from a live server to real receivers: a Matrix homeserver, an SMTP server, a Slack
stand-in and a signed webhook, configured by a YAML file whose secrets come from the environment."""

import re
import signal
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.matrix import MatrixServer, running_matrix
from tests.support.net import wait_for
from tests.support.server import LiveServer
from tests.support.slack import SlackReceiver
from tests.support.smtp import SmtpServer
from tests.support.webhook import WebhookReceiver
from web.cli.demo import DEMO_ALERT

pytestmark = pytest.mark.e2e

PASSWORD = "long enough password"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
POOL_INCIDENT = "INC-2025-014"  # the demo history's checkout pool exhaustion
CHANNELS = ("oncall-slack", "oncall-matrix", "oncall-email", "audit")
CONFIG = """
channels:
  - name: oncall-slack
    kind: slack
    webhook_url: ${SLACK_WEBHOOK_URL}
  - name: oncall-matrix
    kind: apprise
    url: ${MATRIX_URL}
    min_severity: warning
  - name: oncall-email
    kind: apprise
    url: ${EMAIL_URL}
    services: [checkout-service]
  - name: audit
    kind: webhook
    url: ${AUDIT_URL}
    secret: ${AUDIT_SECRET}
"""


@dataclass
class Receivers:
    matrix: MatrixServer
    room: str
    smtp: SmtpServer
    slack: SlackReceiver
    webhook: WebhookReceiver

    def env(self, config: Path) -> dict[str, str]:
        return {
            "RECALLOPS_NOTIFY_CONFIG": str(config),
            "RECALLOPS_NOTIFY_TIMEOUT_S": "5",
            "SLACK_WEBHOOK_URL": self.slack.webhook_url,
            "MATRIX_URL": f"matrix://recallops:bot-password@127.0.0.1:{self.matrix.port}/"
            f"#oncall:recallops.test?discovery=no",
            "EMAIL_URL": self.smtp.apprise_url(),
            "AUDIT_URL": self.webhook.url,
            "AUDIT_SECRET": self.webhook.secret,
        }

    def matrix_messages(self) -> list[dict[str, Any]]:
        return self.matrix.messages("reader", self.room)


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    with running_matrix() as matrix:
        matrix.register("reader", "reader-password")
        matrix.register("recallops", "bot-password")
        room = matrix.create_public_room("reader", "oncall")
        smtp, slack = SmtpServer().start(), SlackReceiver().start()
        webhook = WebhookReceiver(secret="audit-signing-secret").start()
        try:
            yield Receivers(matrix, room, smtp, slack, webhook)
        finally:
            smtp.stop()
            slack.stop()
            webhook.stop()


@pytest.fixture
def server(receivers: Receivers, tmp_path: Path) -> Iterator[LiveServer]:
    config = tmp_path / "notify.yaml"
    config.write_text(CONFIG)
    live = LiveServer(tmp_path / "data", env=receivers.env(config))
    live.cli("seed")
    live.cli("user", "add", "ana", "--role", "engineer", "--password", PASSWORD)
    yield live
    live.stop()


def sender_token(server: LiveServer) -> str:
    done = server.cli("token", "create", "--name", "sender", "--scope", "alerts:write", "--scope", "read")
    return done.stdout.strip().splitlines()[-1]


def post_demo_alert(server: LiveServer, token: str) -> str:
    response = httpx.post(
        f"{server.url}/api/v1/alerts",
        headers={"Authorization": f"Bearer {token}"},
        json=DEMO_ALERT,
        timeout=30,
    )
    assert response.status_code in (200, 202), response.text
    [incident] = response.json()["incidents"]
    return str(incident)


def incident_page(server: LiveServer, public_id: str) -> str:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        token = CSRF.search(client.get("/signin").text)
        assert token
        signed_in = client.post(
            "/signin", data={"name": "ana", "password": PASSWORD, "next": "/", "csrf_token": token.group(1)}
        )
        assert signed_in.status_code in (200, 303), signed_in.text
        return client.get(f"/incidents/{public_id}").text


def test_the_demo_alert_reaches_matrix_email_slack_and_the_webhook_within_seconds(
    server: LiveServer, receivers: Receivers
) -> None:
    server.start()
    token = sender_token(server)
    before_matrix = len(receivers.matrix_messages())
    before_mail, before_slack = len(receivers.smtp.mailbox.messages), len(receivers.slack.messages)
    incident = post_demo_alert(server, token)

    def everywhere() -> bool:
        return (
            len(receivers.matrix_messages()) > before_matrix
            and len(receivers.smtp.mailbox.messages) > before_mail
            and len(receivers.slack.messages) > before_slack
            and len(receivers.webhook.payloads) > 0
        )

    # A deadline, not a stopwatch: how fast deliveries go is a measurement (docs/notifications.md).
    wait_for(everywhere, timeout=30, interval=0.1, what="the briefing on every channel")
    link = f"{server.url}/incidents/{incident}"

    [matrix] = receivers.matrix_messages()[before_matrix:]
    assert matrix["sender"] == "@recallops:recallops.test"
    assert incident in matrix["content"]["body"] and link in matrix["content"]["body"]
    assert POOL_INCIDENT in matrix["content"]["body"]

    [mail] = receivers.smtp.mailbox.messages[before_mail:]
    assert incident in str(mail["Subject"]) and mail["To"] == "oncall@example.org"
    text = receivers.smtp.mailbox.text(mail)
    assert link in text and POOL_INCIDENT in text and "First checks" in text

    [slack] = receivers.slack.messages[before_slack:]
    assert not receivers.slack.invalid and slack.blocks[0]["type"] == "header"
    assert link in str(slack.blocks)

    [payload] = receivers.webhook.payloads
    assert receivers.webhook.rejected == 0
    assert payload["event"] == "briefing_stored" and payload["incident_id"] == incident
    assert payload["link"] == link and POOL_INCIDENT in payload["briefing"]["related"]

    # A receiver holds the message a moment before the worker records it as sent.
    def recorded() -> str | None:
        metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
        sent = (f'recallops_deliveries_total{{channel="{name}",outcome="sent"}} 1.0' for name in CHANNELS)
        return metrics if all(line in metrics for line in sent) else None

    metrics = wait_for(recorded, timeout=30, interval=0.1, what="every delivery recorded as sent")
    assert 'recallops_delivery_outbox_depth{state="pending"}' in metrics
    page = incident_page(server, incident)
    assert "Delivered to" in page
    for label in ("Slack incoming webhook", f"webhook http://127.0.0.1:{receivers.webhook.port}/…"):
        assert f"sent to <strong>{label}</strong>" in page
    for secret in ("bot-password", "audit-signing-secret", "webhook-secret-path"):
        assert secret not in page and secret not in server.log()
    status = server.cli("notify", "status").stdout
    assert "oncall-matrix" in status and "1 sent" in status and "bot-password" not in status


def deliveries(data_dir: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(data_dir / "recallops.db") as conn:
        return list(conn.execute("SELECT channel, event, state FROM deliveries ORDER BY id"))


def test_a_server_killed_between_commit_and_delivery_sends_exactly_once_after_restart(
    server: LiveServer, receivers: Receivers
) -> None:
    """The first server commits an acknowledgement and its four owed messages, but has no worker to
    send them, and is killed outright. The restarted server sends each of them exactly once."""
    server.env["RECALLOPS_RUN_WORKER"] = "false"
    server.start()
    done = server.cli(
        "token", "create", "--name", "ops", "--scope", "alerts:write", "--scope", "incidents:write"
    )
    token = done.stdout.strip().splitlines()[-1]
    incident = post_demo_alert(server, token)
    acked = httpx.post(
        f"{server.url}/api/v1/incidents/{incident}/acknowledge",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert acked.status_code == 200, acked.text
    server.stop(signal.SIGKILL)
    owed = deliveries(server.data_dir)
    assert sorted(channel for channel, _, _ in owed) == [
        "audit",
        "oncall-email",
        "oncall-matrix",
        "oncall-slack",
    ]
    assert {(event, state) for _, event, state in owed} == {("incident_acknowledged", "pending")}

    before_slack, before_hooks = len(receivers.slack.messages), len(receivers.webhook.payloads)
    server.env["RECALLOPS_RUN_WORKER"] = "true"
    server.start()

    def all_sent() -> bool:
        rows = deliveries(server.data_dir)
        events = {event for _, event, _ in rows}
        return "briefing_stored" in events and all(state == "sent" for _, _, state in rows)

    wait_for(all_sent, timeout=60, what="every owed message sent after the restart")
    slack = [m for m in receivers.slack.messages[before_slack:] if m.text.startswith("Acknowledged")]
    hooks = [p for p in receivers.webhook.payloads[before_hooks:] if p["event"] == "incident_acknowledged"]
    assert len(slack) == 1 and incident in slack[0].text
    assert len(hooks) == 1 and hooks[0]["incident_id"] == incident
