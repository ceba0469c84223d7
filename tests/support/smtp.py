"""A real SMTP server on loopback (``aiosmtpd``) that keeps every message it accepts."""

import email
import email.policy
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.support.net import free_port


@dataclass
class Mailbox:
    messages: list[EmailMessage] = field(default_factory=list)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or envelope.content or b""
        assert isinstance(content, bytes)
        parsed = email.message_from_bytes(content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 Message accepted for delivery"

    @staticmethod
    def text(message: EmailMessage) -> str:
        """Every text part of the message, decoded."""
        parts: list[Any] = [
            part.get_content() for part in message.walk() if part.get_content_maintype() == "text"
        ]
        return "\n".join(str(part) for part in parts)


@dataclass
class SmtpServer:
    mailbox: Mailbox = field(default_factory=Mailbox)
    port: int = 0
    _controller: Controller | None = None

    def start(self) -> "SmtpServer":
        self.port = self.port or free_port()
        self._controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()

    def apprise_url(self, to: str = "oncall@example.org") -> str:
        return f"mailto://127.0.0.1:{self.port}?from=recallops@example.org&to={to}&secure=no"
