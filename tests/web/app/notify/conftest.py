"""A container with delivery channels configured through the environment, and a Slack stand-in."""

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.slack import SlackReceiver
from tests.web.http.routes.conftest import configure
from web.app.container import Container


@pytest.fixture
def slack() -> Iterator[SlackReceiver]:
    receiver = SlackReceiver().start()
    yield receiver
    receiver.stop()


def channels_env(monkeypatch: pytest.MonkeyPatch, *channels: dict[str, Any]) -> None:
    monkeypatch.setenv("RECALLOPS_NOTIFY_CHANNELS", json.dumps(list(channels)))
    monkeypatch.setenv("RECALLOPS_NOTIFY_TIMEOUT_S", "3")
    monkeypatch.setenv("RECALLOPS_PUBLIC_URL", "https://recallops.example.org")


@pytest.fixture
async def build(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """Call with channel dicts; returns a migrated container (no worker) with those channels synced."""
    built: list[Container] = []

    def make(*channels: dict[str, Any]) -> Container:
        channels_env(monkeypatch, *channels)
        container = Container.build(configure(monkeypatch, tmp_path / "data", database_url))
        container.notifier.sync(container.sessions)  # as the service does at start
        built.append(container)
        return container

    yield make
    for container in built:
        await container.aclose()
