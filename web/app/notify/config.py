"""Delivery channels as configured: a YAML file (``RECALLOPS_NOTIFY_CONFIG``) or JSON in
``RECALLOPS_NOTIFY_CHANNELS``.

Both hold a list of channels; each has a ``name``, a ``kind`` (``slack``, ``apprise`` or ``webhook``),
how to reach it, and routing rules (``services``, ``min_severity``, ``events``). Any string may be
written ``${NAME}`` to read it from the environment, so secrets need not sit in the file. Secrets are
``SecretStr``: they print as ``**********`` and every error text is scrubbed of them (``redact``)
before it is stored, logged or shown.

    channels:
      - name: oncall-slack
        kind: slack
        token: ${SLACK_BOT_TOKEN}        # or webhook_url: ${SLACK_WEBHOOK_URL}
        channel: "#oncall"
        min_severity: warning
      - name: oncall-matrix
        kind: apprise
        url: ${MATRIX_APPRISE_URL}       # matrixs://user:pass@matrix.example.org/#oncall
        services: [checkout-service, payments-api]
      - name: audit
        kind: webhook
        url: https://hooks.example.org/recallops
        secret: ${RECALLOPS_WEBHOOK_SECRET}
        events: [incident_resolved]
"""

import os
import re
from abc import abstractmethod
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from incidents.delivery.routing import EVENTS, ChannelRoute
from incidents.env_settings import EnvSettings
from incidents.severity import known_spellings, level_of

NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class NotifyConfigError(ValueError):
    """The delivery configuration cannot be used; the message names the channel and the problem."""


def _filled(value: SecretStr) -> SecretStr:
    """An empty secret would be used as given: a webhook signed with an empty key, a send to nowhere."""
    if not value.get_secret_value().strip():
        raise ValueError("is empty")
    return value


def _http(value: Any) -> Any:
    """Only an http(s) URL with a host is sent to: anything else would fail every retry as a network error."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("is not an http:// or https:// URL")
    return value


Secret = Annotated[SecretStr, AfterValidator(_filled)]
HttpSecret = Annotated[SecretStr, AfterValidator(_http)]
HttpText = Annotated[str, AfterValidator(_http)]


class _Channel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME)
    services: list[str] = Field(default_factory=list)
    min_severity: str | None = None
    events: list[Literal[*EVENTS]] = Field(default_factory=lambda: list(EVENTS))  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _known_severity(self) -> "_Channel":
        if self.min_severity is not None and level_of(self.min_severity) is None:
            raise ValueError(
                f"min_severity {self.min_severity!r} is not a severity RecallOps ranks; "
                f"use one of (most urgent first) {known_spellings()}"
            )
        return self

    def secrets(self) -> list[str]:
        return [
            value.get_secret_value()
            for value in vars(self).values()
            if isinstance(value, SecretStr) and value.get_secret_value()
        ]

    def route(self) -> ChannelRoute:
        return ChannelRoute(
            name=self.name,
            kind=self.kind,  # type: ignore[attr-defined]
            label=self.label(),
            services=tuple(self.services),
            min_severity=self.min_severity,
            events=tuple(self.events),
        )

    @abstractmethod
    def label(self) -> str:
        """How the channel is named on pages and in the CLI: never its secret."""


class SlackChannel(_Channel):
    """Slack: a bot token posting with ``chat.postMessage`` (updates thread), or an incoming webhook."""

    kind: Literal["slack"]
    webhook_url: HttpSecret | None = None
    token: Secret | None = None
    channel: str | None = None  # with a token: "#oncall" or a channel id
    api_url: HttpText | None = None  # another Slack-compatible API root, e.g. a gateway

    @model_validator(mode="after")
    def _one_way_in(self) -> "SlackChannel":
        if (self.webhook_url is None) == (self.token is None):
            raise ValueError("give exactly one of webhook_url or token")
        if self.token is not None and not self.channel:
            raise ValueError("a bot token needs a channel to post to")
        return self

    def label(self) -> str:
        return self.channel or "Slack incoming webhook"


class AppriseChannel(_Channel):
    """Anything Apprise reaches (Teams, Mattermost, Discord, Matrix, ntfy, email, ...), by its URL."""

    kind: Literal["apprise"]
    url: Secret

    @model_validator(mode="after")
    def _recognised(self) -> "AppriseChannel":
        if self._plugin() is None:
            raise ValueError("url is not a URL Apprise recognises (see Apprise's wiki for its services)")
        return self

    def label(self) -> str:
        plugin = self._plugin()
        if plugin is None:
            return "apprise (unrecognised URL)"
        label = str(plugin.url(privacy=True)).split("?", 1)[0]
        for topic in self._topics(plugin):
            label = label.replace(topic, "****")
        return label[:255]

    def secrets(self) -> list[str]:
        """The URL and, for ntfy, each topic: whoever knows a topic can read and post to it."""
        return [*super().secrets(), *self._topics(self._plugin())]

    def _plugin(self) -> Any:
        import apprise

        return apprise.Apprise.instantiate(self.url.get_secret_value())

    @staticmethod
    def _topics(plugin: Any) -> list[str]:
        return [str(topic) for topic in getattr(plugin, "topics", None) or [] if str(topic)]


class WebhookChannel(_Channel):
    """A JSON POST, signed with HMAC-SHA256 over ``<timestamp>.<body>`` when ``secret`` is set."""

    kind: Literal["webhook"]
    url: HttpSecret
    secret: Secret | None = None

    def label(self) -> str:
        """Scheme, host and port, as the log writes a URL: a path or query may carry a token, so only
        ``/…`` says there is one."""
        parts = urlsplit(self.url.get_secret_value())
        host = parts.netloc.rpartition("@")[2]  # never the credentials
        rest = "/…" if parts.path.strip("/") or parts.query else ""
        return f"webhook {parts.scheme}://{host}{rest}"


ChannelConfig = Annotated[SlackChannel | AppriseChannel | WebhookChannel, Field(discriminator="kind")]
_CHANNEL: TypeAdapter[ChannelConfig] = TypeAdapter(ChannelConfig)
KINDS = "slack, apprise or webhook"


class NotifySettings(EnvSettings):
    notify_config: Path | None = None
    notify_channels: list[dict[str, Any]] = Field(default_factory=list)
    # Where links in messages point; the served address when unset. A link needs its scheme: without
    # one every chat would show dead text, so it is refused at start.
    public_url: HttpText | None = None
    notify_timeout_s: float = Field(default=10.0, gt=0, le=300)  # the whole send, not one read
    # How long after it was queued a message is still retried; the last try comes at its end.
    notify_retry_window_s: float = Field(default=1800.0, gt=0)
    notify_concurrency: int = Field(default=16, ge=1, le=256)  # sends in flight in the delivery lane
    notify_channel_concurrency: int = Field(default=4, ge=1, le=256)  # of which one channel may hold


def _expand(value: Any, where: str) -> Any:
    """``${NAME}`` from the environment, in every string; a missing variable is an error, not ""."""
    if isinstance(value, str):

        def lookup(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in os.environ:
                raise NotifyConfigError(f"{where}: environment variable {name} is not set")
            return os.environ[name]

        return _ENV_REF.sub(lookup, value)
    if isinstance(value, list):
        return [_expand(item, where) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, where) for key, item in value.items()}
    return value


def _where(number: int, item: Any) -> str:
    """How an error names a channel: ``channel 2 (oncall)``, counted from 1 in the order they are read."""
    name = item.get("name") if isinstance(item, dict) else None
    return f"channel {number} ({name})" if isinstance(name, str) and name else f"channel {number}"


def _kind_error(error: ErrorDetails) -> str | None:
    """A missing or unknown ``kind`` in the operator's words: pydantic speaks of tags and discriminators."""
    if error["type"] == "union_tag_not_found":
        return f"kind: missing; say which channel this is: {KINDS}"
    if error["type"] == "union_tag_invalid":
        return f"kind: {error.get('ctx', {}).get('tag')!r} is not a channel kind; use {KINDS}"
    return None


def _validated(item: Any, where: str) -> ChannelConfig:
    """One channel, or an error naming it and each field that is wrong."""
    try:
        return _CHANNEL.validate_python(_expand(item, where))
    except ValidationError as exc:
        kind = item.get("kind") if isinstance(item, dict) else None
        problems = []
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            field = ".".join(loc[1:] if loc[:1] == [kind] else loc)  # not the kind the union chose
            message = _kind_error(error) or error["msg"].removeprefix("Value error, ")
            problems.append(f"{field}: {message}" if field else message)
        raise NotifyConfigError(f"{where}: {'; '.join(problems)}") from exc


def load_channels(settings: NotifySettings) -> list[ChannelConfig]:
    """Every configured channel, validated; names must be unique across the file and the variable."""
    raw: list[Any] = list(settings.notify_channels)
    if settings.notify_config is not None:
        where = f"RECALLOPS_NOTIFY_CONFIG {settings.notify_config}"
        try:
            document = yaml.safe_load(settings.notify_config.read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise NotifyConfigError(f"{where}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise NotifyConfigError(f"{where} is not valid YAML: {exc}") from exc
        if not isinstance(document, dict) or not isinstance(document.get("channels", []), list):
            raise NotifyConfigError(f"{settings.notify_config}: expected a mapping with a 'channels' list")
        raw.extend(document.get("channels", []))
    channels = [_validated(item, _where(number, item)) for number, item in enumerate(raw, start=1)]
    seen: set[str] = set()
    for number, channel in enumerate(channels, start=1):
        if channel.name in seen:
            raise NotifyConfigError(f"{_where(number, vars(channel))}: the name is used twice")
        seen.add(channel.name)
    return channels


def redact(text: str, secrets: list[str]) -> str:
    """The text with every secret (and its URL path, which often is the secret) replaced."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "[secret]")
        path = urlsplit(secret).path
        if secret.startswith(("http://", "https://")) and len(path) > 8:
            text = text.replace(path, "/[secret]")
    return text
