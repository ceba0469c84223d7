"""Four webhook channels routed for every event, three of them broken the way receivers break, and 20
alerts: every briefing is still stored within seconds, memory writes drain, the healthy channel gets
each message once, the broken channels' rows end failed within their attempt budget, and the server's
log holds none of the channels' secrets."""

import functools
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.e2e.resolution_helpers import POST_MORTEM, client, issue_token, wait_synced
from tests.support.chaos import ChaosReceiver
from tests.support.net import free_port, wait_for
from tests.support.server import LiveServer
from tests.support.webhook import WebhookReceiver

pytestmark = pytest.mark.e2e

ALERTS = 20
RESOLVED = 5
SPACING_S = 0.5
# Every briefing within 5 s of its alert, on a machine where one briefing alone takes 0.5 s (as the
# issue measured it); where one alone takes longer (a loaded runner), the bound keeps that ratio. How
# fast it really is gets reported, not asserted.
BRIEFING_BOUND_S = 5.0
ALONE_S = 0.5
RETRY_WINDOW_S = 5  # each message to a broken receiver is tried a few times, then fails
BROKEN = ("drip", "hang", "nan")
# Each send to a dripping or hanging receiver lasts the whole timeout; the drip is faster than it, so
# only a deadline on the whole send (not one on each read) ends it.
TIMEOUT_S = 2
DRIP_S = 0.5
TOPIC_SECRET = "chaos-ntfy-topic-secret"
FAILING = (*BROKEN, "phones")


@pytest.fixture
def receivers() -> Iterator[tuple[list[ChaosReceiver], WebhookReceiver]]:
    broken = [ChaosReceiver(mode, drip_s=DRIP_S).start() for mode in BROKEN]
    healthy = WebhookReceiver(secret="healthy-signing-secret").start()
    yield broken, healthy
    for receiver in broken:
        receiver.stop()
    healthy.stop()


@pytest.fixture
def server(
    receivers: tuple[list[ChaosReceiver], WebhookReceiver], database_url: str, tmp_path: Path
) -> Iterator[LiveServer]:
    broken, healthy = receivers
    channels = [{"name": r.mode, "kind": "webhook", "url": r.url} for r in broken]
    channels.append({"name": "healthy", "kind": "webhook", "url": healthy.url, "secret": healthy.secret})
    # An ntfy topic on a port nobody listens on: Apprise fails at once, and for ntfy the topic is the secret.
    url = f"ntfy://127.0.0.1:{free_port()}/{TOPIC_SECRET}"
    channels.append({"name": "phones", "kind": "apprise", "url": url})
    env = {
        "RECALLOPS_DATABASE_URL": database_url,
        "RECALLOPS_NOTIFY_CHANNELS": json.dumps(channels),
        "RECALLOPS_NOTIFY_TIMEOUT_S": str(TIMEOUT_S),
        "RECALLOPS_NOTIFY_RETRY_WINDOW_S": str(RETRY_WINDOW_S),
    }
    live = LiveServer(tmp_path / "data", env=env)
    live.start(timeout=300)
    yield live
    live.stop()


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def post_alert(http: httpx.Client, service: str) -> str:
    answer = http.post(
        "/api/v1/alerts",
        json={
            "title": f"{service}: checkout p99 over 4 s",
            "service": service,
            "alertname": "CheckoutLatencyHigh",
            "severity": "critical",
        },
    )
    assert answer.status_code in (200, 202), answer.text
    [incident] = answer.json()["incidents"]
    return str(incident)


def briefing_delay(http: httpx.Client, incident: str) -> float | None:
    """Seconds from the incident's creation to its first briefing, both as the server stored them."""
    answer = http.get(f"/api/v1/incidents/{incident}/briefings")
    if answer.status_code != 200 or not answer.json():
        return None
    first = min(answer.json(), key=lambda v: v["version"])
    opened = http.get(f"/api/v1/incidents/{incident}").json()["created_at"]
    return (_at(first["created_at"]) - _at(opened)).total_seconds()


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_broken_receivers_hold_up_no_briefing_and_no_healthy_message(
    server: LiveServer,
    receivers: tuple[list[ChaosReceiver], WebhookReceiver],
    record_property: Callable[[str, object], None],
) -> None:
    broken, healthy = receivers
    token = issue_token(server)
    with client(server, token) as http:
        # Two alerts first, one at a time: the first loads the embedder, the second is a briefing alone
        # (its messages already stuck on the broken receivers).
        warmups: list[str] = []
        for n in range(2):
            warmups.append(post_alert(http, f"warmup-{n}"))
            briefed = functools.partial(briefing_delay, http, warmups[-1])
            alone = float(wait_for(briefed, timeout=300, interval=0.2, what="a warm-up briefing"))
        incidents: list[str] = []
        for n in range(ALERTS):
            started = time.monotonic()
            incidents.append(post_alert(http, f"chaos-{n}"))
            time.sleep(max(0.0, SPACING_S - (time.monotonic() - started)))  # the storm's pace, not a wait

        def all_briefed() -> list[float] | None:
            found = [briefing_delay(http, incident) for incident in incidents]
            return [d for d in found if d is not None] if None not in found else None

        seconds = sorted(wait_for(all_briefed, timeout=120, interval=0.5, what="every incident briefed"))
        p50 = statistics.median(seconds)
        p99 = seconds[min(len(seconds) - 1, round(0.99 * (len(seconds) - 1)))]
        bound = BRIEFING_BOUND_S * max(1.0, alone / ALONE_S)
        for name, value in (("alone", alone), ("p50", p50), ("p99", p99), ("bound", bound)):
            record_property(f"briefing_delay_{name}_s", round(value, 3))
        print(f"briefing after alert: alone {alone:.3f}s p50 {p50:.3f}s p99 {p99:.3f}s n={len(seconds)}")
        assert max(seconds) <= bound, seconds

        for incident in incidents[:RESOLVED]:
            resolved = http.post(f"/api/v1/incidents/{incident}/resolve", json=POST_MORTEM)
            assert resolved.status_code == 201, resolved.text
        for incident in incidents[:RESOLVED]:
            wait_synced(http, incident, timeout=120)

        def settled() -> str | None:
            text = http.get("/metrics").text
            return text if metric(text, 'recallops_lane_depth{lane="delivery"}') == 0 else None

        def counted() -> str | None:
            """The last row's outcome is counted just after its commit, which emptied the lane."""
            text = http.get("/metrics").text
            owed = metric(text, 'recallops_deliveries_total{channel="healthy",outcome="sent"}')
            failed = [f'recallops_deliveries_total{{channel="{c}",outcome="failed"}}' for c in FAILING]
            return text if all(metric(text, name) == owed for name in failed) else None

        wait_for(settled, timeout=300, interval=1.0, what="every message sent or failed")
        text = wait_for(counted, timeout=10, interval=0.2, what="every outcome counted")

    # Every channel is routed for every event, so each owes the same messages: one per briefing stored
    # and one per resolution at least.
    owed = int(metric(text, 'recallops_deliveries_total{channel="healthy",outcome="sent"}'))
    assert owed >= len(warmups) + ALERTS + RESOLVED
    sent = Counter(p["delivery_id"] for p in healthy.payloads)
    assert healthy.rejected == 0 and len(sent) == owed and set(sent.values()) == {1}
    briefed = Counter(p["incident_id"] for p in healthy.payloads if p["event"] == "briefing_stored")
    assert briefed == dict.fromkeys(warmups + incidents, 1)
    for receiver in broken:
        channel = receiver.mode
        assert metric(text, f'recallops_deliveries_total{{channel="{channel}",outcome="failed"}}') == owed
        retried = metric(text, f'recallops_deliveries_total{{channel="{channel}",outcome="failing"}}')
        # Every try but each row's last was counted as failing, and none came after its row's window:
        # each wait is a second at least, and the last try comes at the window's end.
        assert retried + owed == receiver.requests <= owed * (RETRY_WINDOW_S + 1), channel
    assert metric(text, 'recallops_deliveries_total{channel="phones",outcome="failed"}') == owed
    assert metric(text, 'recallops_lane_depth{lane="memory"}') == 0

    server.stop()  # the log is read whole, shutdown included
    log = server.log()
    assert "delivery failed" in log  # the lines a leak would be in were written
    secrets = [f"{r.mode}-path-secret" for r in broken] + [f"{r.mode}-query-secret" for r in broken]
    for secret in (*secrets, TOPIC_SECRET, healthy.secret, token):
        assert secret not in log, f"{secret} in the server log"
