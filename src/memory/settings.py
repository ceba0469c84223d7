"""Memory settings: which driver, which bank, where the embedded file lives, how long to wait."""

import ipaddress
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field

from incidents.env_settings import EnvSettings


class MemorySettings(EnvSettings):
    data_dir: Path = Path("data")
    memory: Literal["embedded", "hindsight"] = "embedded"
    bank_id: str = "meridian-commerce-incidents"
    hindsight_base_url: str = Field(
        default="http://127.0.0.1:8888",
        validation_alias=AliasChoices("RECALLOPS_HINDSIGHT_BASE_URL", "HINDSIGHT_BASE_URL"),
    )
    hindsight_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("RECALLOPS_HINDSIGHT_API_KEY", "HINDSIGHT_API_KEY")
    )
    memory_timeout_s: float = Field(default=10.0, gt=0)

    @property
    def embedded_path(self) -> Path:
        return self.data_dir / "memory.db"

    @property
    def location(self) -> str:
        """Which memory these settings open, in words that tell two apart: the driver and the Hindsight
        server and bank, or the embedded file's absolute path (the embedded driver has one bank a file)."""
        if self.memory == "hindsight":
            return f"hindsight {server_url(self.hindsight_base_url)} bank {self.bank_id}"
        return f"embedded {self.embedded_path.resolve()}"


DEFAULT_PORTS = {"http": 80, "https": 443}


def server_url(url: str) -> str:
    """A server's base URL spelled one way for every spelling that reaches the same server: scheme and
    host in lower case, the scheme's default port and a trailing slash dropped, and this machine's
    loopback (``localhost``, ``127.0.0.1``, ``[::1]``) written ``127.0.0.1``, a user and password left out.

    Replicas and admin shells compare the memory they use by these words (``location``), and one
    written ``http://localhost:8888/`` where another says ``http://127.0.0.1:8888`` is the same bank
    (told apart, a shell with one replica's settings would be refused as writing where no replica
    reads, and each replica starting would say the service moved). A URL this cannot read is kept as
    written, without its trailing slash."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:  # a port that is no number, or out of range
        return url.strip().rstrip("/")
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in DEFAULT_PORTS or not host:
        return url.strip().rstrip("/")
    if host == "localhost" or _is_loopback(host):
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    netloc = host  # a user and password in the URL name no other server, and are not shown
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return parts._replace(scheme=scheme, netloc=netloc).geturl().rstrip("/")


def _is_loopback(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
