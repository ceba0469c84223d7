"""The API in-process on a real database (SQLite file or PostgreSQL), with one token per kind of caller."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from incidents.auth.tokens import create_token
from incidents.database import transaction
from web.app.settings import Settings
from web.http.app import create_app

MAX_BODY = 65536
TOKENS = {
    "sender": ["alerts:write"],
    "reader": ["read"],
    "automation": ["incidents:write", "read"],
    "historian": ["history:replace", "incidents:write", "read"],
}


@dataclass
class Api:
    client: TestClient
    secrets: dict[str, str] = field(default_factory=dict)

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secrets[who]}"}

    def post(self, path: str, payload: Any, who: str = "sender", **kwargs: Any) -> Any:
        return self.client.post(path, json=payload, headers=self.auth(who), **kwargs)

    def incidents(self, **params: Any) -> list[dict[str, Any]]:
        response = self.client.get("/api/v1/incidents", params=params, headers=self.auth("reader"))
        assert response.status_code == 200, response.text
        return response.json()["items"]

    def incident(self, public_id: str) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/incidents/{public_id}", headers=self.auth("reader"))
        assert response.status_code == 200, response.text
        return response.json()


def configure(monkeypatch: pytest.MonkeyPatch, data_dir: Path, database_url: str) -> Settings:
    for name in ("DATABASE_URL", "RECALLOPS_DATABASE_URL", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RECALLOPS_DATA_DIR", str(data_dir))
    monkeypatch.setenv("RECALLOPS_DATABASE_URL", database_url)
    monkeypatch.setenv("RECALLOPS_RUN_WORKER", "false")
    monkeypatch.setenv("RECALLOPS_MAX_BODY_BYTES", str(MAX_BODY))
    return Settings()


@pytest.fixture
def api(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    app = create_app(configure(monkeypatch, tmp_path / "data", database_url))
    with TestClient(app) as client:
        api = Api(client)
        with transaction(app.state.container.sessions) as db:
            for name, scopes in TOKENS.items():
                api.secrets[name] = create_token(db_session=db, name=name, scopes=scopes).secret
        yield api
