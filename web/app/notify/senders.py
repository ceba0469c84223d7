"""Sending one notice to one channel, and saying whether a failure is worth another try.

Every sender returns the receiver's id for the message (a Slack ``ts``, which later messages about the
same incident thread under) or ``None``, and raises ``SendError`` otherwise: ``retry`` is true for a
5xx, a 429 (with ``Retry-After`` when the receiver gave one) and network errors, false for any other
4xx, which no retry will fix. Senders are blocking (``slack_sdk``, Apprise); the worker runs them in a
thread under a timeout. Neither library retries on its own here: the outbox owns retries.
"""

import hashlib
import hmac
import json
import re
import time
import urllib.error
from collections.abc import Mapping
from dataclasses import dataclass

import apprise
import httpx
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.webhook import WebhookClient

from web.app.notify.config import AppriseChannel, ChannelConfig, SlackChannel, WebhookChannel
from web.app.notify.render import Notice, markdown, plain_text, slack_blocks, webhook_body

SIGNATURE_HEADER = "X-RecallOps-Signature"
TIMESTAMP_HEADER = "X-RecallOps-Timestamp"
DELIVERY_HEADER = "X-RecallOps-Delivery"
_APPRISE_STATUS = re.compile(r"error=(\d{3})")


@dataclass
class SendError(Exception):
    message: str
    retry: bool
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return self.message


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                return float(value[0] if isinstance(value, list) else value)
            except (TypeError, ValueError):
                return None
    return None


def _http_error(status: int, what: str, headers: Mapping[str, str] | None = None) -> SendError:
    retry = status == 429 or status >= 500
    return SendError(f"{status} from {what}", retry=retry, retry_after_s=_retry_after(headers))


def send_slack(channel: SlackChannel, notice: Notice, *, thread: str | None, timeout_s: float) -> str | None:
    blocks = slack_blocks(notice)
    text = plain_text(notice)
    timeout = max(1, int(timeout_s))
    if channel.webhook_url is not None:
        hook = WebhookClient(channel.webhook_url.get_secret_value(), timeout=timeout, retry_handlers=[])
        try:
            answer = hook.send(text=text, blocks=blocks)
        except (urllib.error.URLError, OSError) as exc:
            raise SendError(f"network error reaching Slack: {exc}", retry=True) from exc
        if answer.status_code != 200:
            raise _http_error(answer.status_code, f"Slack: {answer.body[:200]}", answer.headers)
        return None
    assert channel.token is not None
    client = WebClient(
        token=channel.token.get_secret_value(),
        base_url=channel.api_url or WebClient.BASE_URL,
        timeout=timeout,
        retry_handlers=[],
    )
    try:
        response = client.chat_postMessage(
            channel=channel.channel or "", text=text, blocks=blocks, thread_ts=thread
        )
    except SlackApiError as exc:
        error = exc.response.get("error") if isinstance(exc.response.data, dict) else None
        raise _http_error(
            exc.response.status_code, f"Slack ({error or 'error'})", dict(exc.response.headers)
        ) from exc
    except (SlackClientError, urllib.error.URLError, OSError) as exc:
        raise SendError(f"network error reaching Slack: {exc}", retry=True) from exc
    ts = response.get("ts")
    return str(ts) if ts else None


def send_apprise(channel: AppriseChannel, notice: Notice) -> None:
    """Apprise says only whether it worked; the HTTP status, when a plugin logged one, decides a retry."""
    sender = apprise.Apprise()
    if not sender.add(channel.url.get_secret_value()):
        raise SendError("Apprise does not recognise this channel's URL", retry=False)
    result = sender.notify(
        title=plain_text(notice), body=markdown(notice), body_format=apprise.NotifyFormat.MARKDOWN
    )
    if result:
        return
    messages = [entry.message for entry in result.logs() if entry.level in ("WARNING", "ERROR")]
    statuses = [int(code) for message in messages for code in _APPRISE_STATUS.findall(message)]
    detail = messages[-1] if messages else "the service did not accept the message"
    if statuses:
        status = statuses[-1]
        raise SendError(detail, retry=status == 429 or status >= 500)
    raise SendError(detail, retry=True)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``v1=`` and the hex HMAC-SHA256 of ``<timestamp>.<body>`` under the channel's secret."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def send_webhook(channel: WebhookChannel, notice: Notice, *, delivery_id: int, timeout_s: float) -> None:
    body = json.dumps(webhook_body(notice, delivery_id=delivery_id), separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        TIMESTAMP_HEADER: timestamp,
        DELIVERY_HEADER: str(delivery_id),
    }
    if channel.secret is not None:
        headers[SIGNATURE_HEADER] = signature(channel.secret.get_secret_value(), timestamp, body)
    try:
        response = httpx.post(
            channel.url.get_secret_value(), content=body, headers=headers, timeout=timeout_s
        )
    except httpx.HTTPError as exc:
        raise SendError(f"network error reaching the webhook: {type(exc).__name__}", retry=True) from exc
    if response.status_code >= 300:
        raise _http_error(response.status_code, "the webhook", response.headers)


def send(
    channel: ChannelConfig, notice: Notice, *, delivery_id: int, thread: str | None, timeout_s: float
) -> str | None:
    """Send through the channel's kind; returns the receiver's id for the message when it has one."""
    if isinstance(channel, SlackChannel):
        return send_slack(channel, notice, thread=thread, timeout_s=timeout_s)
    if isinstance(channel, AppriseChannel):
        send_apprise(channel, notice)
        return None
    send_webhook(channel, notice, delivery_id=delivery_id, timeout_s=timeout_s)
    return None
