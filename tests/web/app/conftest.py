"""A service container on SQLite in a temporary directory, for the tests of ``web.app`` that need no more
(a module that needs other settings defines its own ``container``)."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.web.http.routes.conftest import configure
from web.app.container import Container


@pytest.fixture
async def container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Container]:
    built = Container.build(configure(monkeypatch, tmp_path / "data", f"sqlite:///{tmp_path / 'r.db'}"))
    yield built
    await built.aclose()
