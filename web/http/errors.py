"""Every client error is a JSON 4xx that names the problem; nothing escapes as a bare 500."""

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from web.http.methods import allowed_methods

log = logging.getLogger(__name__)

# The database refused or dropped the connection (down, restarting, out of connections): a 503 the
# sender retries, never a 500. Intake says the same when its write fails.
DATABASE_DOWN = (OperationalError, InterfaceError)
UNAVAILABLE = "database busy or unavailable; retry"
RETRY_AFTER = {"Retry-After": "5"}  # seconds: a database restart or failover, not a long outage
Page = Callable[[Request], Awaitable[Response]]
InvalidPage = Callable[[Request, RequestValidationError], Awaitable[Response]]


def pagerduty_error(kind: str, message: str, errors: list[str]) -> dict[str, object]:
    """An error as PagerDuty's Events API words it (``pdpyras`` reads ``status``, ``message`` and
    ``errors``), with the ``detail`` every other RecallOps error has."""
    return {"status": kind, "message": message, "errors": errors, "detail": "; ".join(errors)}


def said(error: Mapping[str, Any]) -> str:
    """Pydantic's message without the "Value error, " it puts before a validator's own sentence."""
    return str(error.get("msg", "")).removeprefix("Value error, ")


def _loc(loc: tuple[object, ...] | list[object]) -> str:
    return ".".join(str(part) for part in loc if part != "body") or "body"


def page_path(path: str) -> bool:
    """A page's address: not the API's, PagerDuty's or MCP's, whose clients read JSON."""
    return not (path.startswith(("/api/", "/v2/")) or path == "/mcp")


def _not_json(exc: RequestValidationError) -> str | None:
    """A body FastAPI could not parse, said as the intake routes say it (a 400): FastAPI reports it as
    a 422 located at the character offset (``1: JSON decode error``), which names no field."""
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            reason = error.get("ctx", {}).get("error") or "cannot be parsed"
            return f"body is not valid JSON: {reason} at character {error['loc'][-1]}"
    return None


def _unreadable_body(reason: str) -> JSONResponse:
    """A 400 as the intake routes answer a body they cannot parse, with the one problem located."""
    return JSONResponse(
        status_code=400, content={"detail": reason, "errors": [{"field": "body", "message": reason}]}
    )


def browsing(request: Request) -> bool:
    """A browser asking for a page, not a client of the API."""
    return "text/html" in request.headers.get("accept", "") and not request.url.path.startswith("/api/")


def install(
    app: FastAPI,
    not_found_page: Page | None = None,
    unavailable_page: Page | None = None,
    invalid_page: InvalidPage | None = None,
) -> None:
    """``not_found_page``: what a browser (one that asks for HTML) gets for an address nothing serves
    outside the API, ``unavailable_page`` while the database is down; ``invalid_page``: what a page
    route answers when its path or query does not validate, whoever asks (the page is HTML either way).
    Every other error, and the API's, is JSON."""

    async def database_down(request: Request, exc: Exception) -> Response:
        log.warning(
            "database unavailable", extra={"path": request.url.path, "error": str(exc).splitlines()[0]}
        )
        if browsing(request) and unavailable_page is not None:
            return await unavailable_page(request)
        return JSONResponse(status_code=503, content={"detail": UNAVAILABLE}, headers=RETRY_AFTER)

    for kind in DATABASE_DOWN:
        app.add_exception_handler(kind, database_down)

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, _: ClientDisconnect) -> Response:
        """A client that hangs up before its body is read (or whose body the gate cut at the limit) is
        no fault of the server: an INFO line, and a 400 no one reads, instead of an error's traceback."""
        log.info("client went away before its body was read", extra={"path": request.url.path})
        return Response(status_code=400)

    @app.exception_handler(RequestValidationError)
    async def validation(request: Request, exc: RequestValidationError) -> Response:
        if invalid_page is not None and page_path(request.url.path):
            return await invalid_page(request, exc)
        unreadable = _not_json(exc)
        if unreadable is not None:
            return _unreadable_body(unreadable)
        problems = [{"field": _loc(e.get("loc", ())), "message": said(e)} for e in exc.errors()]
        detail = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return JSONResponse(status_code=422, content={"detail": detail, "errors": problems})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404 and browsing(request) and not_found_page is not None:
            return await not_found_page(request)
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI's parser
            return _unreadable_body("body is not UTF-8 encoded JSON")
        headers = exc.headers
        if exc.status_code == 405:  # the router names the first route's methods; the path may have more
            headers = {
                **(headers or {}),
                "Allow": ", ".join(allowed_methods(request.app.router.routes, request.scope)),
            }
        return JSONResponse(status_code=exc.status_code, content={"detail": exc.detail}, headers=headers)
