"""An in-process app on a fresh data directory, with users and incidents made through the real services."""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.service import ingest
from incidents.auth import users
from incidents.database import transaction
from web.app.container import Container
from web.app.history import import_history, load_seeds
from web.app.settings import Settings
from web.http.app import create_app

PASSWORD = "long enough password"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Site:
    client: TestClient

    @property
    def container(self) -> Container:
        return self.client.app.state.container  # type: ignore[attr-defined]

    def add_user(self, name: str, role: str = "engineer", password: str | None = PASSWORD) -> None:
        with transaction(self.container.sessions) as db:
            users.add_user(db_session=db, name=name, role=role, password=password)

    def csrf(self, path: str = "/signin") -> str:
        match = CSRF.search(self.client.get(path).text)
        assert match, f"no CSRF token on {path}"
        return match.group(1)

    def sign_in(self, name: str, password: str = PASSWORD, next_path: str = "/incidents") -> None:
        token = self.csrf()
        response = self.client.post(
            "/signin",
            data={"name": name, "password": password, "next": next_path, "csrf_token": token},
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text

    def signed_in(self, name: str = "ana", role: str = "engineer") -> None:
        """A new user of this role, signed in on this browser."""
        self.add_user(name, role=role)
        self.sign_in(name)

    def resolve_form(self, public_id: str, data: dict[str, str]):  # type: ignore[no-untyped-def]
        """The resolve form submitted as this browser's user, its token taken from the form page."""
        path = f"/incidents/{public_id}/resolve"
        return self.post_form(path, data, csrf_from=path)

    def post_form(self, path: str, data: dict[str, str] | None = None, csrf_from: str = "/incidents"):  # type: ignore[no-untyped-def]
        return self.client.post(
            path, data={"csrf_token": self.csrf(csrf_from), **(data or {})}, follow_redirects=False
        )

    def seed(self, count: int = 8) -> list[str]:
        """The first ``count`` demo incidents, into the database and memory, as ``recallops seed`` does."""
        seeds = load_seeds()
        rows = seeds.rows[:count]
        container = self.container

        async def run() -> None:
            await import_history(
                sessions=container.sessions, bank=container.bank, rows=rows, origin="seed", actor="seed"
            )

        self.client.portal.call(run)  # type: ignore[union-attr]
        return [row.incident_id for _, row in rows]

    def open_incident(
        self, *, summary: str = "Checkout p99 latency above 2s", service: str = "checkout", **extra: object
    ) -> str:
        alert = NormalizedAlert(
            source="generic",
            fingerprint=str(extra.get("fingerprint", f"fp-{summary[:20]}")),
            status="firing",
            alertname=str(extra.get("alertname", "HighLatency")),
            service=service,
            severity=str(extra.get("severity", "critical")),
            summary=summary,
            description=str(extra.get("description", "p99 above threshold for 5 minutes")),
            labels=dict(extra.get("labels", {"service": service, "env": "prod"})),  # type: ignore[arg-type]
            annotations=dict(extra.get("annotations", {"dashboard": "latency"})),  # type: ignore[arg-type]
            starts_at=datetime.now(UTC),
            ends_at=None,
            generator_url=extra.get("generator_url", "http://prometheus.local/graph"),  # type: ignore[arg-type]
            runbook_url=extra.get("runbook_url"),  # type: ignore[arg-type]
            dedup_key=None,
            raw={},
        )
        with transaction(self.container.sessions) as db:
            result = ingest(db_session=db, alerts=[alert], via="test-sender")
        assert result[0].incident
        return result[0].incident


def _site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str | None) -> Iterator[Site]:
    for name in ("GROQ_API_KEY", "DATABASE_URL", "RECALLOPS_DATABASE_URL", "RECALLOPS_SSO_HEADER"):
        monkeypatch.delenv(name, raising=False)
    if database_url:
        monkeypatch.setenv("RECALLOPS_DATABASE_URL", database_url)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECALLOPS_RUN_WORKER", "false")
    with TestClient(create_app(Settings())) as client:
        yield Site(client)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """The site on a SQLite file in its data directory."""
    yield from _site(tmp_path, monkeypatch, None)


@pytest.fixture
def any_db_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str) -> Iterator[Site]:
    """The site on SQLite and, in a second run, on a real PostgreSQL."""
    yield from _site(tmp_path, monkeypatch, database_url)
