"""The gate in front of every route: who is calling, and how many body bytes the route will take.

One ASGI middleware, so no handler can forget it. For each request it finds the rule of the route that
will answer, then, before the first byte of the body is read:

0. refuses a NUL in the path or the query (422): no id or filter can hold one, and PostgreSQL
   cannot even compare with one;
1. refuses a declared ``Content-Length`` over the route's limit (413);
2. for a method that carries a body (anything but GET, HEAD, OPTIONS), checks the credential the
   headers carry (bearer token, session cookie with its CSRF header, SSO header) and answers 401
   without reading anything when there is none. Routes whose body *is* the credential (sign-in, the
   PagerDuty ``routing_key``) are marked ``anonymous`` and only get the size cap;
3. counts the body as it streams in and answers 413 the moment it passes the limit, whatever
   ``Content-Length`` said; the handler then sees a disconnect and its own answer is dropped.

Routes with a rule of their own are listed in ``RULES``; every other route gets ``DEFAULT``. The
scope check (403) stays with the route's ``require(scope)``, which reuses the principal found here
instead of asking the database again.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from web.app.settings import Settings
from web.http.security import Principal

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_MAX_BYTES = 256 * 1024  # JSON bodies and page forms: notes and post-mortems fit many times over
PRINCIPAL_KEY = "principal"  # in ``request.state``: the caller the gate already identified
CHALLENGE = (b"www-authenticate", b'Bearer realm="recallops"')


@dataclass(frozen=True)
class BodyRule:
    """``max_bytes`` (a number, or read from the settings), and whether the body is the credential."""

    max_bytes: int | Callable[[Settings], int] = DEFAULT_MAX_BYTES
    anonymous: bool = False
    advice: str = ""

    def limit(self, settings: Settings) -> int:
        return self.max_bytes(settings) if callable(self.max_bytes) else self.max_bytes


DEFAULT = BodyRule()


def intake_limit(settings: Settings) -> int:
    return settings.incidents.max_body_bytes


def import_limit(settings: Settings) -> int:
    return settings.incidents.max_import_bytes


# Routes whose body differs from DEFAULT, first match wins. Kept here, in one table, so the rules
# are read before any route (or FastAPI's own body parsing) runs.
RULES: tuple[tuple[str, BodyRule], ...] = (
    ("/api/v1/alerts/pagerduty", BodyRule(intake_limit, anonymous=True)),  # routing_key is the credential
    ("/v2/enqueue", BodyRule(intake_limit, anonymous=True)),
    ("/api/v1/alerts", BodyRule(intake_limit)),
    ("/api/v1/alerts/{source}", BodyRule(intake_limit)),
    ("/api/v1/memory/import", BodyRule(import_limit, advice="; split the file")),
    ("/api/v1/drafts/import", BodyRule(import_limit, advice="; split the file")),
    ("/signin", BodyRule(16 * 1024, anonymous=True)),  # the password in the form is the credential
)
_COMPILED = tuple((compile_path(path)[0], rule) for path, rule in RULES)

Identify = Callable[[Request, bool], Principal | None]  # (request, is_page) -> the caller


def rule_for(path: str) -> BodyRule:
    return next((rule for pattern, rule in _COMPILED if pattern.match(path)), DEFAULT)


def _is_page(path: str) -> bool:
    """Pages send a missing sign-in to the sign-in form; the API, PagerDuty and MCP answer 401."""
    return not (path.startswith(("/api/", "/v2/")) or path == "/mcp")


class BodyGate:
    """See the module docstring. ``identify`` finds the caller from headers (in a worker thread)."""

    def __init__(self, app: ASGIApp, *, settings: Settings, identify: Identify) -> None:
        self.app = app
        self.settings = settings
        self.identify = identify

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b"").lower():
            await _json(send, 422, "the URL contains a NUL character, which no field can hold")
            return
        rule = rule_for(scope["path"])
        limit = rule.limit(self.settings)
        request = Request(scope)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            detail = f"body of {declared} bytes is over the {limit}-byte limit{rule.advice}"
            await _json(send, 413, detail)
            return
        if not rule.anonymous and scope["method"] not in SAFE_METHODS:
            page = _is_page(scope["path"])
            principal = await run_in_threadpool(self.identify, request, page)
            if principal is None:
                await (_to_sign_in(send) if page else _json(send, 401, "missing or invalid credentials"))
                return
            scope.setdefault("state", {})[PRINCIPAL_KEY] = principal
        await self._capped(scope, receive, send, limit, rule.advice)

    async def _capped(self, scope: Scope, receive: Receive, send: Send, limit: int, advice: str) -> None:
        received = 0
        cut = False
        started = False

        async def counted() -> Message:
            nonlocal received, cut
            message = await receive()
            if message["type"] == "http.request" and not cut:
                received += len(message.get("body", b""))
                if received > limit:
                    cut = True
                    if not started:
                        await _json(send, 413, f"body is over the {limit}-byte limit{advice}")
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if cut:
                return  # the 413 has been sent; the handler's own answer is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not cut:
                raise  # only the handler's reaction to the cut body is expected and silenced


async def _json(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append(CHALLENGE)
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _to_sign_in(send: Send) -> None:
    headers = [(b"location", b"/signin"), (b"content-length", b"0"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def gate_principal(request: Request) -> Principal | None:
    """The caller the gate identified for this request, when it did."""
    principal = getattr(request.state, PRINCIPAL_KEY, None)
    return principal if isinstance(principal, Principal) else None
