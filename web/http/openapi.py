"""The OpenAPI schema says what an error looks like, as ``web.http.errors`` answers it.

FastAPI documents every 422 as its own ``HTTPValidationError`` (a list of located objects), which no
route of ours answers, and other error codes with a description alone. FastAPI builds the schema once;
then each error response without a schema of its own, or with FastAPI's 422, gets ``ErrorBody``, and
each operation that takes a body lists the 400 and 413 every body can get.
"""

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field
from pydantic.json_schema import models_json_schema

FASTAPI_422 = "#/components/schemas/HTTPValidationError"
BODY_ERRORS = {
    "400": "the body cannot be parsed (not valid JSON)",
    "413": "the body is over the route's size limit",
}


class FieldProblem(BaseModel):
    field: str = Field(description="Where: a dotted path into the body, or the parameter's name")
    message: str


class ErrorBody(BaseModel):
    """An error: detail names the problem in one line; a request that does not validate (422) or whose
    body is not JSON (400) adds errors, one entry per problem. Alert intake has its own shapes."""

    detail: str
    errors: list[FieldProblem] | None = None


def _with_error_bodies(spec: dict[str, Any]) -> dict[str, Any]:
    ref_template = "#/components/schemas/{model}"
    _, defined = models_json_schema([(ErrorBody, "serialization")], ref_template=ref_template)
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(defined["$defs"])
    error_body = {"application/json": {"schema": {"$ref": ref_template.format(model="ErrorBody")}}}
    for operation in (op for path in spec.get("paths", {}).values() for op in path.values()):
        if "requestBody" in operation:  # every body passes the gate's cap and a JSON or form parser
            for code, description in BODY_ERRORS.items():
                operation["responses"].setdefault(code, {"description": description})
        for code, response in operation.get("responses", {}).items():
            schema = response.get("content", {}).get("application/json", {}).get("schema", {})
            if code[0] in "45" and (not schema or schema.get("$ref") == FASTAPI_422):
                response["content"] = error_body
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return spec


def install(app: FastAPI) -> None:
    """FastAPI's schema, built once, with the error bodies in it."""
    build = app.openapi

    def schema() -> dict[str, Any]:
        first = app.openapi_schema is None
        spec = build()
        return _with_error_bodies(spec) if first else spec

    app.openapi = schema  # type: ignore[method-assign]
