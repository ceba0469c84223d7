"""The OpenAPI schema documents the errors the API answers, in the shapes it answers them."""

from typing import Any

import pytest

from tests.web.http.routes.conftest import Api
from web.http.openapi import ErrorBody

ERROR_MODELS = {"ErrorBody", "IntakeError", "PagerDutyError"}
INTAKE = ["/api/v1/alerts", "/api/v1/alerts/alertmanager", "/api/v1/alerts/grafana", "/v2/enqueue"]


@pytest.fixture
def spec(api: Api) -> dict[str, Any]:
    schema: dict[str, Any] = api.client.get("/openapi.json").json()
    return schema


def _operations(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", op) for path, ops in spec["paths"].items() for method, op in ops.items()
    ]


def test_every_error_response_has_a_body_of_ours(spec: dict[str, Any]) -> None:
    for name, operation in _operations(spec):
        for code, response in operation["responses"].items():
            if code[0] not in "45":
                continue
            ref = response["content"]["application/json"]["schema"]["$ref"]
            assert ref.rsplit("/", 1)[1] in ERROR_MODELS, (name, code, ref)
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_an_operation_taking_a_body_lists_400_413_and_422(spec: dict[str, Any]) -> None:
    taking = [(name, op) for name, op in _operations(spec) if "requestBody" in op]
    assert {f"POST {path}" for path in INTAKE} <= {name for name, _ in taking}
    for name, operation in taking:
        assert {"400", "413"} <= set(operation["responses"]), name
        if name.removeprefix("POST ") not in ("/v2/enqueue", "/api/v1/alerts/pagerduty"):  # PagerDuty: 400
            assert "422" in operation["responses"], name


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/incidents?limit=0", None),
        ("post", "/api/v1/ask", {"text": ""}),
        ("post", "/api/v1/ask", "{"),
    ],
)
def test_an_error_comes_back_as_documented(api: Api, method: str, path: str, body: Any) -> None:
    """``detail`` a string, and ``errors`` one entry per problem, for a 422 and for a body not JSON."""
    content = body if isinstance(body, str) else None
    headers = {**api.auth("reader"), "Content-Type": "application/json"}
    response = api.client.request(
        method, path, json=None if content else body, content=content, headers=headers
    )
    assert response.status_code in (400, 422), response.text
    error = ErrorBody.model_validate(response.json(), strict=True)
    assert error.errors and all(problem.field and problem.message for problem in error.errors)


def test_the_intake_answer_documents_every_outcome(spec: dict[str, Any]) -> None:
    """A client reads the outcomes it may get, and the escalated repeat's severities, from the schema."""
    schemas = spec["components"]["schemas"]
    assert {"accepted", "stored", "escalated", "duplicates"} <= set(schemas["IntakeResponse"]["properties"])
    outcome = schemas["AlertOutcome"]["properties"]
    assert outcome["outcome"]["enum"] == ["stored", "escalated", "duplicate"]
    assert {"severity", "previous_severity"} <= set(outcome)


def test_one_incident_documents_where_its_messages_stand_per_channel(spec: dict[str, Any]) -> None:
    """A script reads the delivery states, and the receiver's hold, from the schema."""
    schemas = spec["components"]["schemas"]
    assert "delivery" in schemas["IncidentDetail"]["required"]
    line = schemas["DeliveryLine"]["properties"]
    assert line["state"]["enum"] == ["upcoming", "pending", "held", "sent", "failing", "failed"]
    assert {"label", "error", "error_at", "next_attempt_at", "hold"} <= set(line)
    assert {"until", "reason", "reason_at"} <= set(schemas["ChannelHold"]["properties"])
