"""Sending one notice to one channel, and saying whether a failure is worth another try.

Every sender returns the receiver's id for the message (a Slack ``ts``, which later messages about the
same incident thread under) or ``None``, and raises ``SendError`` otherwise: ``retry`` is true for a
5xx, a 429 (with ``Retry-After`` when the receiver gave one) and network errors, false for any other
4xx, which no retry will fix. A ``Retry-After`` is kept only on an answer worth another try (a 429, a
503 for maintenance, any 5xx): the outbox holds the whole channel that long. On a refusal it asks for
nothing, since that message is not sent again, and the channel's other messages go on. No library
retries on its own here: the outbox owns retries.

``send`` bounds the whole send, not each read: a receiver that drips a byte at a time or never
answers is cut off at ``timeout_s``. Slack and the webhook go through async clients, which the
deadline cancels (the connection is closed); Apprise has only a blocking API, so it runs on a thread
of its own that is abandoned and counted at the deadline (``web.app.deadline``), at most a few per
channel. Apprise is told to send on that thread, not on its process-wide pool, where one hung
receiver's sends would hold the workers every other channel's sends wait for. What a receiver sends back is
untrusted: ``Retry-After`` is parsed and bounded (``incidents.queue.backoff``), and an error body is
cut short and stripped of control characters before it is kept.
"""

import asyncio
import functools
import hashlib
import hmac
import json
import logging
import re
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import apprise
import httpx
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from incidents.queue.backoff import retry_after_seconds
from web.app.deadline import TooManyStuckCalls, call_with_deadline
from web.app.notify.config import AppriseChannel, ChannelConfig, SlackChannel, WebhookChannel
from web.app.notify.render import Notice, markdown, plain_text, slack_blocks, slack_text, webhook_body

SIGNATURE_HEADER = "X-RecallOps-Signature"
TIMESTAMP_HEADER = "X-RecallOps-Timestamp"
DELIVERY_HEADER = "X-RecallOps-Delivery"
_APPRISE_STATUS = re.compile(r"error=(\d{3})")
# How Apprise's email plugin logs (at DEBUG) the error smtplib raised: the server's code and reply.
_SMTP_REPLY = re.compile(r"^Socket Exception: .*?\((\d{3}), b?['\"](.*)['\"]\)")
# Apprise writes an email's Subject as one line, quoted-printable; SMTP refuses a line over 1000 octets.
MAX_SUBJECT_OCTETS = 900
MAX_BODY_CHARS = 200


@dataclass
class SendError(Exception):
    message: str
    retry: bool
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return self.message


def _refusal(message: str, *, retry: bool, headers: Mapping[str, Any] | None) -> SendError:
    """The error to record; the receiver's ``Retry-After`` only when the message is tried again."""
    return SendError(message, retry=retry, retry_after_s=_retry_after(headers) if retry else None)


def _retry_after(headers: Mapping[str, Any] | None) -> float | None:
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            first = value[0] if isinstance(value, list) and value else value
            return retry_after_seconds(first) if isinstance(first, str) else None
    return None


def receiver_text(text: str, limit: int = MAX_BODY_CHARS) -> str:
    """A receiver's words fit for a log line and an error column: printable, one line, short."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _http_error(
    status: int, what: str, headers: Mapping[str, Any] | None = None, body: str = ""
) -> SendError:
    retry = status == 429 or status >= 500
    said = f": {receiver_text(body)}" if body.strip() else ""
    return _refusal(f"{status} from {what}{said}", retry=retry, headers=headers)


async def send_slack(
    channel: SlackChannel, notice: Notice, *, thread: str | None, timeout_s: float
) -> str | None:
    blocks = slack_blocks(notice)
    text = slack_text(notice)
    timeout = max(1, int(timeout_s))
    if channel.webhook_url is not None:
        hook = AsyncWebhookClient(channel.webhook_url.get_secret_value(), timeout=timeout, retry_handlers=[])
        try:
            answer = await hook.send(text=text, blocks=blocks)
        except (aiohttp.ClientError, OSError) as exc:
            raise SendError(f"network error reaching Slack: {type(exc).__name__}", retry=True) from exc
        if answer.status_code != 200:
            raise _http_error(answer.status_code, "Slack", answer.headers, str(answer.body))
        return None
    assert channel.token is not None
    client = AsyncWebClient(
        token=channel.token.get_secret_value(),
        base_url=channel.api_url or AsyncWebClient.BASE_URL,
        timeout=timeout,
        retry_handlers=[],
    )
    try:
        response = await client.chat_postMessage(
            channel=channel.channel or "", text=text, blocks=blocks, thread_ts=thread
        )
    except SlackApiError as exc:
        raise _slack_refusal(exc) from exc
    except AttributeError as exc:  # slack_sdk reading a text/plain answer as if it were Slack's JSON
        raise SendError("an answer from Slack that is not its JSON", retry=True) from exc
    except (SlackClientError, aiohttp.ClientError, OSError) as exc:
        raise SendError(f"network error reaching Slack: {type(exc).__name__}", retry=True) from exc
    ts = response.get("ts")
    return str(ts) if ts else None


def subject(title: str) -> str:
    """The title short enough for an email's Subject line: each character counted as quoted-printable
    writes it (a letter, digit or space 1 octet, other ASCII 3, anything else 3 per UTF-8 byte)."""
    octets = [1 if ch.isascii() and (ch.isalnum() or ch == " ") else 3 * len(ch.encode()) for ch in title]
    if sum(octets) <= MAX_SUBJECT_OCTETS:
        return title
    room = MAX_SUBJECT_OCTETS - 3 * len("…".encode())
    kept = 0
    while octets[kept] <= room:
        room -= octets[kept]
        kept += 1
    return title[:kept] + "…"


def _slack_refusal(exc: SlackApiError) -> SendError:
    """Slack's ``error`` code and status; or, for an answer that is not Slack's JSON at all (a proxy's
    page, a body slack_sdk could not parse, whose response it hands over raw), its status, retried
    unless a 4xx said no."""
    response = exc.response
    status = int(getattr(response, "status_code", None) or getattr(response, "status", None) or 0)
    data = getattr(response, "data", None)
    headers = dict(getattr(response, "headers", None) or {})
    if isinstance(data, dict) and data.get("error"):
        return _http_error(status, f"Slack ({receiver_text(str(data['error']))})", headers)
    return _refusal(
        f"{status} from Slack: an answer that is not its JSON",
        retry=status == 429 or not 400 <= status < 500,
        headers=headers,
    )


def send_apprise(channel: AppriseChannel, notice: Notice) -> None:
    """Apprise says only whether it worked; the HTTP status, when a plugin logged one, decides a retry,
    and so does an email's SMTP reply (RFC 5321: a 4yz is transient, a 5yz refuses this message for good).

    With no service timeout of its own (``send`` bounds the call), Apprise runs a single service on the
    calling thread rather than on its shared pool."""
    sender = apprise.Apprise(asset=apprise.AppriseAsset(service_timeout=0))
    if not sender.add(channel.url.get_secret_value()):
        raise SendError("Apprise does not recognise this channel's URL", retry=False)
    result = sender.notify(
        title=subject(plain_text(notice)),
        body=markdown(notice),
        body_format=apprise.NotifyFormat.MARKDOWN,
        log_level=logging.DEBUG,
    )
    if result:
        return
    entries = list(result.logs())
    replies = [found for entry in entries if (found := _SMTP_REPLY.match(entry.message))]
    if replies:
        code, reply = int(replies[-1].group(1)), replies[-1].group(2)
        raise SendError(receiver_text(f"{code} from the mail server: {reply}"), retry=code < 500)
    messages = [entry.message for entry in entries if entry.level in ("WARNING", "ERROR")]
    statuses = [int(code) for message in messages for code in _APPRISE_STATUS.findall(message)]
    detail = receiver_text(messages[-1]) if messages else "the service did not accept the message"
    if statuses:
        status = statuses[-1]
        raise SendError(detail, retry=status == 429 or status >= 500)
    raise SendError(detail, retry=True)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``v1=`` and the hex HMAC-SHA256 of ``<timestamp>.<body>`` under the channel's secret."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every webhook send: building one per send costs more than many a send."""
    return httpx.create_ssl_context()


async def send_webhook(
    channel: WebhookChannel, notice: Notice, *, delivery_id: int, timeout_s: float
) -> None:
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
        async with httpx.AsyncClient(timeout=timeout_s, verify=_tls()) as client:
            response = await client.post(channel.url.get_secret_value(), content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise SendError(f"network error reaching the webhook: {type(exc).__name__}", retry=True) from exc
    if response.status_code >= 300:
        raise _http_error(
            response.status_code, "the webhook", response.headers, response.text[:MAX_BODY_CHARS]
        )


async def send(
    channel: ChannelConfig, notice: Notice, *, delivery_id: int, thread: str | None, timeout_s: float
) -> str | None:
    """Send through the channel's kind within ``timeout_s`` in all; the receiver's id for the message."""
    try:
        async with asyncio.timeout(timeout_s):
            if isinstance(channel, SlackChannel):
                return await send_slack(channel, notice, thread=thread, timeout_s=timeout_s)
            if isinstance(channel, AppriseChannel):
                apprise_send = functools.partial(send_apprise, channel, notice)
                await call_with_deadline(
                    apprise_send, timeout_s=timeout_s, what=f"Apprise channel {channel.name}"
                )
                return None
            await send_webhook(channel, notice, delivery_id=delivery_id, timeout_s=timeout_s)
            return None
    except TimeoutError as exc:
        raise SendError(f"no complete answer within {timeout_s:.3g}s", retry=True) from exc
    except TooManyStuckCalls as exc:
        raise SendError(str(exc), retry=True) from exc
