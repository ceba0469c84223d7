"""Every client error is a JSON 4xx that names the problem; nothing escapes as a bare 500."""

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)


def pagerduty_error(kind: str, message: str, errors: list[str]) -> dict[str, object]:
    """An error as PagerDuty's Events API words it (``pdpyras`` reads ``status``, ``message`` and
    ``errors``), with the ``detail`` every other RecallOps error has."""
    return {"status": kind, "message": message, "errors": errors, "detail": "; ".join(errors)}


def _loc(loc: tuple[object, ...] | list[object]) -> str:
    return ".".join(str(part) for part in loc if part != "body") or "body"


def json_error(exc: StarletteHTTPException) -> JSONResponse:
    return JSONResponse(status_code=exc.status_code, content={"detail": exc.detail}, headers=exc.headers)


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"field": _loc(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()]
        detail = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return JSONResponse(status_code=422, content={"detail": detail, "errors": problems})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return json_error(exc)
