"""Every client error is a JSON 4xx that names the problem; nothing escapes as a bare 500."""

import logging
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)


def pagerduty_error(kind: str, message: str, errors: list[str]) -> dict[str, object]:
    """An error as PagerDuty's Events API words it (``pdpyras`` reads ``status``, ``message`` and
    ``errors``), with the ``detail`` every other RecallOps error has."""
    return {"status": kind, "message": message, "errors": errors, "detail": "; ".join(errors)}


def _loc(loc: tuple[object, ...] | list[object]) -> str:
    return ".".join(str(part) for part in loc if part != "body") or "body"


def install(app: FastAPI, not_found_page: Callable[[Request], Awaitable[Response]] | None = None) -> None:
    """``not_found_page``: what a browser (one that asks for HTML) gets for an address nothing serves
    outside the API; every other error, and the API's 404, is JSON."""

    @app.exception_handler(RequestValidationError)
    async def validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"field": _loc(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()]
        detail = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return JSONResponse(status_code=422, content={"detail": detail, "errors": problems})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        browsing = "text/html" in request.headers.get("accept", "") and not request.url.path.startswith(
            "/api/"
        )
        if exc.status_code == 404 and browsing and not_found_page is not None:
            return await not_found_page(request)
        return JSONResponse(status_code=exc.status_code, content={"detail": exc.detail}, headers=exc.headers)
