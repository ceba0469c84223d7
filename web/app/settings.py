"""Service settings, composed of each package's own so every command reads the same environment."""

import difflib
import functools
import ipaddress
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

from dotenv import dotenv_values
from pydantic import AfterValidator, AliasChoices, Field
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from agent.settings import LLMSettings
from incidents.env_settings import EnvSettings
from incidents.settings import IncidentSettings
from memory.settings import MemorySettings
from web.app.notify.config import NotifySettings

log = logging.getLogger(__name__)


def _proxy(value: str) -> str:
    """An address, a network or ``*``: uvicorn takes anything else as a name no peer ever has."""
    if value != "*":
        try:
            ipaddress.ip_network(value)  # an address is a network of one
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or network") from None
    return value


class WebSettings(EnvSettings):
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    secret_key: str | None = None  # signs session cookies; generated into the data dir when unset
    sso_header: str | None = None  # trusted reverse-proxy header carrying the user name, when set
    session_idle_s: float = Field(default=12 * 3600, gt=0)  # a session unused this long ends (a shift)
    session_lifetime_s: float = Field(default=7 * 24 * 3600, gt=0)  # and any, this long after sign-in
    # Peers whose X-Forwarded-For/-Proto are believed; none by default.
    trusted_proxies: list[Annotated[str, AfterValidator(_proxy)]] = Field(default_factory=list)
    metrics_token: str | None = None  # when set, /metrics wants "Authorization: Bearer <it>"
    run_worker: bool = True
    worker_poll_s: float = Field(default=0.5, ge=0.01)  # less would be a busy loop
    # Claims on briefing jobs and memory writes: renewed every third of this while the work runs, so a
    # replica that dies has its work taken over by another within this plus one poll.
    lease_s: float = Field(default=10.0, gt=0.5)
    # Each worker lane runs at most this many items at once (web.app.lanes); chat deliveries have theirs
    # in the notify settings.
    briefing_concurrency: int = Field(default=2, ge=1, le=64)
    memory_write_concurrency: int = Field(default=2, ge=1, le=64)
    # At most one automatic profile refresh per this many seconds.
    profile_refresh_debounce_s: float = Field(default=30.0, ge=0)
    # How often the worker looks for new memory writes and finished refreshes.
    profile_check_s: float = Field(default=2.0, ge=0.01)


PARTS: tuple[type[EnvSettings], ...] = (
    WebSettings,
    IncidentSettings,
    MemorySettings,
    LLMSettings,
    NotifySettings,
)
# Read from the environment outside the settings (the model cache, before any setting is read).
ENVIRONMENT_ONLY = frozenset({"RECALLOPS_CACHE"})
# How alike a name must be to one RecallOps reads to be taken for a typo of it (RECALLOPS_PROT: 0.93).
TYPO = 0.9


def variable_names() -> set[str]:
    """Every ``RECALLOPS_`` variable RecallOps reads: each setting's own name and its aliases."""
    names = set(ENVIRONMENT_ONLY)
    for part in PARTS:
        for name, field in part.model_fields.items():
            names.add(f"RECALLOPS_{name.upper()}")
            alias = field.validation_alias
            choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
            names.update(
                c.upper() for c in choices if isinstance(c, str) and c.upper().startswith("RECALLOPS_")
            )
    return names


def typos(given: Iterable[str]) -> list[tuple[str, str]]:
    """(name given, name meant) for each ``RECALLOPS_`` variable no setting reads that is a near miss of
    one that does: a mistyped RECALLOPS_PROT would leave the port at its default without a word. A name
    unlike any setting (a secret the channels name as ``${RECALLOPS_WEBHOOK_SECRET}``) is left alone."""
    known = variable_names()
    found = []
    for name in sorted({g.upper() for g in given if g.upper().startswith("RECALLOPS_")} - known):
        meant = difflib.get_close_matches(name, known, n=1, cutoff=TYPO)
        if meant:
            found.append((name, meant[0]))
    return found


@functools.cache
def _warn_typo(name: str, meant: str) -> None:
    """Once a process: serve and every command read the settings more than once."""
    log.warning("%s is not a setting RecallOps reads; did you mean %s?", name, meant)


class Settings:
    """Everything one process needs, read once from the environment."""

    def __init__(self) -> None:
        self.web = WebSettings()
        self.incidents = IncidentSettings()
        self.memory = MemorySettings()
        self.llm = LLMSettings()
        self.notify = NotifySettings()
        written = dotenv_values(".env", interpolate=False) if Path(".env").is_file() else {}
        for name, meant in typos([*os.environ, *written]):
            _warn_typo(name, meant)

    @functools.cached_property
    def database_url(self) -> str:
        return self.incidents.resolved_database_url

    def secrets(self) -> list[str]:
        """Keys and passwords the settings hold, which no log line may show."""
        try:
            password = make_url(self.database_url).password
        except ArgumentError:
            password = None
        found = (self.llm.llm_api_key, self.memory.hindsight_api_key, password)
        return [str(value) for value in found if value]
