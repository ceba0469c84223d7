"""The configured channels of this process: read once from the settings, their routing written to the
database where event writers read it.

Apart from the delivery lane (``web.app.notify.deliver``), whose senders import the chat SDKs, so a
process that only writes events (a command, a request) loads none of them.
"""

from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from incidents.database import transaction
from incidents.delivery.routing import sync_channels
from incidents.locking import serialized_writes
from web.app.notify.config import ChannelConfig, NotifySettings, load_channels


@dataclass
class Notifier:
    """The configured channels of this process, with the settings their deliveries use."""

    settings: NotifySettings
    channels: dict[str, ChannelConfig] = field(default_factory=dict)
    base_url: str = ""

    @classmethod
    def load(cls, settings: NotifySettings, *, base_url: str) -> "Notifier":
        channels = {channel.name: channel for channel in load_channels(settings)}
        return cls(
            settings=settings, channels=channels, base_url=(settings.public_url or base_url).rstrip("/")
        )

    @property
    def secrets(self) -> list[str]:
        return [secret for channel in self.channels.values() for secret in channel.secrets()]

    @property
    def lease_s(self) -> float:
        """Longer than any one send may take (each has a total deadline), renewed while it runs."""
        return 3 * self.settings.notify_timeout_s + 30

    def sync(self, sessions: sessionmaker[Session]) -> None:
        """Write this configuration's routing into the database, where event writers read it."""
        with transaction(sessions) as db, serialized_writes(db):
            sync_channels(db_session=db, routes=[channel.route() for channel in self.channels.values()])
            db.commit()
