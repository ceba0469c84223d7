"""Nothing secret in a log line: a live server delivering to channels whose URLs, paths, query tokens
and ntfy topic are secrets logs none of them, and URLs are logged as scheme and host only."""

import io
import json
import logging
from pathlib import Path

import httpx

from tests.support.net import wait_for
from tests.support.server import LiveServer
from tests.support.webhook import WebhookReceiver
from web.app.logs import FORMAT, Quiet, Scrubbed, configure_logging, scrub_urls

PATH_SECRET = "hook-path-secret-5150"
QUERY_SECRET = "query-token-secret-8086"
TOPIC_SECRET = "ntfy-topic-secret-6502"
SIGNING_SECRET = "signing-secret-z80"


def test_urls_are_logged_as_scheme_and_host_only() -> None:
    line = f'HTTP Request: POST https://bot:pw@hooks.example.org/{PATH_SECRET}?token={QUERY_SECRET} "200 OK"'
    assert scrub_urls(line) == 'HTTP Request: POST https://hooks.example.org/… "200 OK"'


def test_a_delivery_run_logs_none_of_the_configured_secrets(tmp_path: Path) -> None:
    receiver = WebhookReceiver(secret=SIGNING_SECRET).start()
    channels = [
        {
            "name": "audit",
            "kind": "webhook",
            "url": f"{receiver.url}/{PATH_SECRET}?token={QUERY_SECRET}",
            "secret": SIGNING_SECRET,
        },
        # ntfy answered by the same receiver, which refuses it (unsigned): the failure is logged too.
        {"name": "phones", "kind": "apprise", "url": f"ntfy://127.0.0.1:{receiver.port}/{TOPIC_SECRET}"},
    ]
    server = LiveServer(tmp_path / "data", env={"RECALLOPS_NOTIFY_CHANNELS": json.dumps(channels)})
    token = server.cli("token", "create", "--name", "sender", "--scope", "alerts:write").stdout.strip()
    server.start(timeout=180)
    try:
        alert = {"title": "Checkout p99 over 2s", "service": "checkout-service", "severity": "critical"}
        response = httpx.post(
            f"{server.url}/api/v1/alerts",
            json=alert,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert response.status_code in (200, 202), response.text
        wait_for(lambda: receiver.payloads and receiver.rejected, timeout=120, what="both deliveries tried")
        status = server.cli("notify", "status").stdout
    finally:
        server.stop()
        receiver.stop()
    log = server.log()
    assert "HTTP Request" not in log or "/…" in log
    for secret in (PATH_SECRET, QUERY_SECRET, TOPIC_SECRET, SIGNING_SECRET, token):
        assert secret not in log, f"{secret} in the server log"
        assert secret not in status


def test_a_lines_extra_fields_follow_its_message_scrubbed_like_it() -> None:
    stream = io.StringIO()
    ours = logging.StreamHandler(stream)
    ours.setFormatter(logging.Formatter(FORMAT))
    scrubbed = Scrubbed()
    scrubbed.secrets = [SIGNING_SECRET]
    ours.addFilter(scrubbed)
    log = logging.getLogger("recallops.test.details")
    log.addHandler(ours)
    log.propagate = False
    try:
        log.warning(
            "delivery failed",
            extra={
                "delivery_id": 7,
                "channel": "audit",
                "error": f"503 from {SIGNING_SECRET} at https://h.example.org/{PATH_SECRET}",
            },
        )
    finally:
        log.removeHandler(ours)
    line = stream.getvalue()
    assert (
        'delivery failed delivery_id=7 channel=audit error="503 from [secret] at https://h.example.org/…"'
        in line
    )
    assert SIGNING_SECRET not in line and PATH_SECRET not in line


def test_apprise_lines_stay_in_each_result_and_the_log_shows_its_warnings_only() -> None:
    configure_logging()
    assert logging.getLogger("apprise").isEnabledFor(logging.DEBUG)  # a refused email's SMTP reply
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    stream = io.StringIO()
    ours = logging.StreamHandler(stream)
    ours.addFilter(Quiet())
    log = logging.getLogger("apprise.test.quiet")
    log.addHandler(ours)
    log.propagate = False
    try:
        log.debug("Socket Exception: (554, b'no')")
        log.warning("Sending email failed.")
    finally:
        log.removeHandler(ours)
    assert stream.getvalue() == "Sending email failed.\n"
