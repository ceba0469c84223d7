"""The resolution conversation over real HTTP: a live server (evidence-only, embedded memory, SQLite),
its worker briefing the incident and delivering the committed post-mortem to memory."""

from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from agent.resolution.conversation import ResolutionDraft
from incidents.auth.tokens import create_token
from incidents.database import make_engine, make_session_factory, transaction
from tests.e2e.resolution_helpers import client, memory_documents, open_incident, wait_synced
from tests.support.net import wait_for
from tests.support.server import LiveServer
from web.cli import app as cli
from web.cli.resolve_draft import render

NOTES = (
    "Root cause: idle-in-transaction sessions from the 14:00 deploy held every pool slot\n"
    "Resolution steps: killed the idle sessions; rolled the deploy back\n"
    "Outcome: errors gone within 4 minutes"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(tmp_path_factory.mktemp("resolution-conversation") / "server").start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def tokens(server: LiveServer) -> dict[str, str]:
    """Issued straight into the server's database (what ``recallops token create`` does, minus a process)."""
    engine = make_engine(f"sqlite:///{server.data_dir / 'recallops.db'}")
    try:
        with transaction(make_session_factory(engine)) as db:
            return {
                name: create_token(db_session=db, name=name, scopes=scopes).secret
                for name, scopes in (
                    ("oncall-dana", ["alerts:write", "incidents:write", "read"]),
                    ("dashboard", ["read"]),
                )
            }
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def oncall(server: LiveServer, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with client(server, tokens["oncall-dana"]) as http:
        yield http


def converse(http: httpx.Client, incident: str, **body: object) -> httpx.Response:
    return http.post(f"/api/v1/incidents/{incident}/resolution-conversation", json={"notes": NOTES, **body})


def test_a_read_token_or_no_token_cannot_start_one(
    server: LiveServer, oncall: httpx.Client, tokens: dict[str, str]
) -> None:
    incident = open_incident(oncall, "checkout-service", "CheckoutErrors")
    with client(server, tokens["dashboard"]) as http:
        refused = converse(http, incident, commit=True)
    assert refused.status_code == 403 and "incidents:write" in refused.json()["detail"]
    anonymous = httpx.post(
        f"{server.url}/api/v1/incidents/{incident}/resolution-conversation", json={"notes": NOTES}
    )
    assert anonymous.status_code == 401
    assert oncall.get(f"/api/v1/incidents/{incident}/memory").json()["state"] is None


def test_unknown_incident_and_bad_notes(oncall: httpx.Client) -> None:
    assert converse(oncall, "INC-9999").status_code == 404
    incident = open_incident(oncall, "cart-service", "CartErrors")
    assert (
        oncall.post(f"/api/v1/incidents/{incident}/resolution-conversation", json={"notes": "  "}).status_code
        == 422
    )
    too_long = {"notes": "x" * 20_001}
    assert (
        oncall.post(f"/api/v1/incidents/{incident}/resolution-conversation", json=too_long).status_code == 422
    )


def test_evidence_only_draft_then_commit_reaches_memory(server: LiveServer, oncall: httpx.Client) -> None:
    incident = open_incident(oncall, "payment-gateway", "PaymentErrors")
    wait_for(
        lambda: oncall.get(f"/api/v1/incidents/{incident}/briefing").status_code == 200,
        timeout=60,
        what="the incident briefed",
    )
    draft = converse(oncall, incident)
    assert draft.status_code == 200, draft.text
    body = draft.json()
    assert body["mode"] == "evidence-only" and not body["logged"] and body["complete"]
    assert body["engineer"] == "oncall-dana"
    assert [e["kind"] for e in body["evidence"]] == ["alert", "notes", "timeline", "briefing"]
    assert body["draft"]["root_cause"] == {
        "text": "idle-in-transaction sessions from the 14:00 deploy held every pool slot",
        "citations": [2],
        "source": "notes",
    }
    assert body["draft"]["symptom"]["source"] == "alert" and body["draft"]["symptom"]["citations"] == [1]
    assert oncall.get(f"/api/v1/incidents/{incident}/memory").json()["state"] is None
    assert oncall.get(f"/api/v1/incidents/{incident}").json()["status"] != "resolved"

    committed = converse(oncall, incident, commit=True).json()
    assert committed["logged"] and committed["resolution_version"] == 1
    assert committed["resolve_body"] == body["resolve_body"]
    resolution = oncall.get(f"/api/v1/incidents/{incident}/resolution").json()
    assert resolution["resolution"]["resolved_by"] == "oncall-dana"
    assert resolution["resolution"]["outcome"] == "errors gone within 4 minutes"
    wait_synced(oncall, incident)
    assert memory_documents(server.data_dir, incident) == 1


def test_the_cli_drafts_and_commits_as_a_named_operator(server: LiveServer, oncall: httpx.Client) -> None:
    incident = open_incident(oncall, "auth-service", "AuthErrors")
    refused = CliRunner().invoke(cli, ["resolve-draft", incident, "--notes", NOTES])
    assert refused.exit_code == 2 and "--as" in refused.output
    done = server.cli("resolve-draft", incident, "--notes", NOTES, "--as", "lee", "--commit", "--json")
    result = ResolutionDraft.model_validate_json(done.stdout)
    assert result.logged and result.engineer == "lee" and done.stderr == ""
    resolution = oncall.get(f"/api/v1/incidents/{incident}/resolution").json()
    assert resolution["resolution"]["resolved_by"] == "lee"
    wait_synced(oncall, incident)
    text = render(result)
    assert "logged as resolution version 1" in text and "Outcome (notes) [2]:" in text
