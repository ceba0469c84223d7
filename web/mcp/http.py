"""``/mcp`` in the service: the MCP server over streamable HTTP, behind the API's bearer tokens.

Every request must carry ``Authorization: Bearer <token>`` for a live token with the ``read`` scope
(the tools only read): no token or an unknown one is a 401, a token without ``read`` a 403, checked
before the SDK sees the request. Session cookies are not accepted here; an MCP client is a machine.
The transport is stateless (every request stands alone), so any replica can answer any request.
Stateless, it never has a message of its own to push, so it offers no GET stream: ``GET /mcp`` is a
405, as the protocol provides, instead of an event stream held open forever by each caller.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.concurrency import run_in_threadpool
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from web.http.auth import CHALLENGE, authorize, token_principal
from web.http.deps import get_container
from web.http.security import bearer_secret
from web.mcp.server import build_server

PATH = "/mcp"
SCOPE = "read"


class GuardedMCP:
    """An ASGI endpoint: authenticate and authorize, then hand the request to the SDK's session manager."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            await run_in_threadpool(self._check, request)
        except HTTPException as exc:
            response = JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
            await response(scope, receive, send)
            return
        await self._server.session_manager.handle_request(scope, receive, send)

    @staticmethod
    def _check(request: Request) -> None:
        secret = bearer_secret(request)
        if secret is None:
            raise HTTPException(401, "missing bearer token", headers=CHALLENGE)
        with get_container(request).sessions() as db_session:
            authorize(token_principal(db_session, secret), SCOPE)


def mount(app: FastAPI) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Add ``/mcp`` to the app; returns the context the app's lifespan runs the MCP sessions in."""
    server = build_server(lambda: app.state.container)
    # Creates the session manager. Host-header checks guard unauthenticated local servers against DNS
    # rebinding; here every request needs a bearer token, and the service may sit behind any host name.
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.router.routes.append(
        Route(PATH, GuardedMCP(server), methods=["POST", "DELETE"], include_in_schema=False)
    )

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return running
