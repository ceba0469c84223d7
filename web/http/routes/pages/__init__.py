"""The server-rendered pages for on-call engineers, and what they need around them.

``install`` adds the session cookie, the security headers, the static files and one router per page
group, plus the handlers that turn "sign in first", page errors and addresses that do not validate
into HTML rather than JSON. Like the JSON routes, the pages may import ``web.app``, ``incidents``,
``agent`` and ``memory.service``, never a memory driver.
"""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from web.app.settings import WebSettings
from web.http import sessions
from web.http.headers import SecurityHeaders
from web.http.routes.pages import (
    incident,
    incidents,
    memory,
    profile,
    records,
    replay,
    resolve,
    review,
    signin,
)
from web.http.routes.pages.address import invalid_address, nul_in_address
from web.http.routes.pages.common import PageError, SignInRequired, error_page, render, sign_in_redirect
from web.http.templating import STATIC_DIR

ROUTERS = (
    signin.router,
    incidents.router,
    incident.router,
    resolve.router,
    replay.router,
    records.router,
    memory.router,
    profile.router,
    review.router,
)


def install(app: FastAPI, settings: WebSettings) -> None:
    sessions.install(app, settings)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in ROUTERS:
        app.include_router(router)

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> RedirectResponse:
        return sign_in_redirect(request, exc)

    @app.exception_handler(PageError)
    async def _page_error(request: Request, exc: PageError) -> HTMLResponse:
        return await run_in_threadpool(error_page, request, exc)


async def unavailable_page(request: Request) -> HTMLResponse:
    """The site's 503 page while the database is down: drawn without it (no signed-in name)."""
    context = {
        "title": "Database unavailable",
        "message": "RecallOps cannot reach its database right now. Try again in a moment.",
        "status": 503,
        "link": None,
    }
    return await run_in_threadpool(render, request, "error.html", context, principal=None, status=503)


async def not_found_page(request: Request) -> HTMLResponse:
    """The site's 404 page for an address nothing serves (``errors.install`` sends browsers here)."""
    missing = PageError(404, "Not found", f"There is no page at {request.url.path}.")
    return await run_in_threadpool(error_page, request, missing)


async def invalid_page(request: Request, exc: RequestValidationError) -> HTMLResponse:
    """A page's 422 for a path or query that does not validate (``errors.install`` sends it here)."""
    return await run_in_threadpool(error_page, request, invalid_address(request, exc.errors()))


def nul_page(request: Request) -> HTMLResponse:
    """A page's 422 for a NUL in its address (the gate answers it before any route runs)."""
    return error_page(request, nul_in_address(request))
