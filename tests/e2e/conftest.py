"""A running RecallOps server (uvicorn subprocess) on SQLite or PostgreSQL, with its tokens."""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import LiveServer


@dataclass
class Running:
    server: LiveServer
    sender: str
    reader: str

    def get(self, path: str) -> Any:
        response = httpx.get(
            f"{self.server.url}{path}", headers={"Authorization": f"Bearer {self.reader}"}, timeout=10
        )
        response.raise_for_status()
        return response.json()


def issue(server: LiveServer, name: str, scope: str) -> str:
    return server.cli("token", "create", "--name", name, "--scope", scope).stdout.strip()


@pytest.fixture
def running(database_url: str, tmp_path: Path) -> Iterator[Running]:
    server = LiveServer(tmp_path / "server", env={"RECALLOPS_DATABASE_URL": database_url})
    server.start()
    try:
        yield Running(
            server, issue(server, "alertmanager", "alerts:write"), issue(server, "dashboard", "read")
        )
    finally:
        server.stop()
