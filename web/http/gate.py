"""The gate in front of every route: who is calling, and how many body bytes the route will take.

One ASGI middleware, so no handler can forget it. For each request it finds the rule of the route that
will answer, then, before the first byte of the body is read:

0. refuses a NUL in the path or the query (422): no id or filter can hold one, and PostgreSQL
   cannot even compare with one (a page's address gets ``nul_page``, the site's page saying where);
1. for a method that carries a body (anything but GET, HEAD, OPTIONS), checks the credential the
   headers carry (bearer token, session cookie with its CSRF header, SSO header) and answers 401
   without reading anything when there is none (a page form goes where ``sign_in`` sends it instead:
   the sign-in page, then back to the form's page), or 405 with ``Allow`` when no route at that path
   takes the method. Routes whose body *is* the credential (sign-in, the
   PagerDuty ``routing_key``) are marked ``anonymous`` and only get the size cap;
2. refuses a declared ``Content-Length`` over the route's limit (413): after the credential, so a
   caller without one learns nothing of the limits;
3. counts the body as it streams in and answers 413 the moment it passes the limit, whatever
   ``Content-Length`` said; the handler then sees a disconnect and its own answer is dropped.

Routes with a rule of their own are listed in ``RULES``; every other route gets ``DEFAULT``. The
scope check (403) stays with the route's ``require(scope)``, which reuses the principal found here
instead of asking the database again.

Alert intake is the hot path: its routes ask the database about the token again inside the
transaction that stores the alerts (``rechecked``), so for them the gate lets a bearer token through
on a check of its own from the last ``RECENT_S`` seconds, without a worker thread and a database
session per alert. A token revoked since then gets its body read and a 401 from the route, before
anything is written.
"""

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Router, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from incidents.auth.tokens import hash_secret
from web.app.settings import Settings
from web.http.errors import DATABASE_DOWN, RETRY_AFTER, UNAVAILABLE, page_path, pagerduty_error
from web.http.methods import allowed_methods
from web.http.security import Principal, bearer_secret, unidentified

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_MAX_BYTES = 256 * 1024  # JSON bodies and page forms: notes and post-mortems fit many times over
PRINCIPAL_KEY = "principal"  # in ``request.state``: the caller the gate already identified
CHALLENGE = (b"www-authenticate", b'Bearer realm="recallops"')
RECENT_S = 60.0  # how long a token the gate checked lets a ``rechecked`` route's body in unasked
RECENT_TOKENS = 256  # tokens remembered at once (a deployment has a handful of senders)


@dataclass(frozen=True)
class BodyRule:
    """``max_bytes`` (a number, or read from the settings), whether the body is the credential, and
    whether the route checks a bearer token again in its own transaction (``rechecked``)."""

    max_bytes: int | Callable[[Settings], int] = DEFAULT_MAX_BYTES
    anonymous: bool = False
    advice: str = ""
    rechecked: bool = False
    pagerduty: bool = False  # its errors in PagerDuty's shape (``errors.pagerduty_error``)

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
    # PagerDuty's two addresses: the routing_key in the body is the credential.
    ("/api/v1/alerts/pagerduty", BodyRule(intake_limit, anonymous=True, pagerduty=True)),
    ("/v2/enqueue", BodyRule(intake_limit, anonymous=True, pagerduty=True)),
    ("/api/v1/alerts", BodyRule(intake_limit, rechecked=True)),
    ("/api/v1/alerts/{source}", BodyRule(intake_limit, rechecked=True)),
    ("/api/v1/memory/import", BodyRule(import_limit, advice="; split the file")),
    ("/api/v1/drafts/import", BodyRule(import_limit, advice="; split the file")),
    ("/signin", BodyRule(16 * 1024, anonymous=True)),  # the password in the form is the credential
)
_COMPILED = tuple((compile_path(path)[0], rule) for path, rule in RULES)

Identify = Callable[[Request, bool], Principal | None]  # (request, is_page) -> the caller
SignIn = Callable[[Request], Response]  # a page form sent without a live session -> where it goes
NulPage = Callable[[Request], Response]  # a page's address holding a NUL -> the page saying so (blocking)


def rule_for(path: str) -> BodyRule:
    return next((rule for pattern, rule in _COMPILED if pattern.match(path)), DEFAULT)


class BodyGate:
    """See the module docstring. ``identify`` finds the caller from headers (in a worker thread)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        settings: Settings,
        identify: Identify,
        sign_in: SignIn,
        nul_page: NulPage,
        router: Router,
    ) -> None:
        self.app = app
        self.router = router
        self.settings = settings
        self.identify = identify
        self.sign_in = sign_in
        self.nul_page = nul_page
        self.recent = RecentTokens()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b"").lower():
            if page_path(scope["path"]):
                answer = await run_in_threadpool(self.nul_page, request)
                answer.headers["connection"] = "close"  # the body was never read
                await answer(scope, receive, send)
                return
            await _json(send, 422, "the URL contains a NUL character, which no field can hold")
            return
        rule = rule_for(scope["path"])
        if not rule.anonymous and scope["method"] not in SAFE_METHODS:
            principal = await self._caller(scope, receive, send, rule)
            if principal is None:
                return
            scope.setdefault("state", {})[PRINCIPAL_KEY] = principal
        limit = rule.limit(self.settings)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            detail = f"body of {declared} bytes is over the {limit}-byte limit{rule.advice}"
            await _json(send, 413, detail, rule.pagerduty)
            return
        await self._capped(scope, receive, send, limit, rule)

    async def _caller(self, scope: Scope, receive: Receive, send: Send, rule: BodyRule) -> Principal | None:
        """Who sends this body, or None once the refusal is sent: a 405 naming the allowed methods
        when no route takes this one (a page would otherwise send it to sign in, for nothing), else a
        401, or, for a page form, where ``sign_in`` sends it."""
        request = Request(scope)
        principal = self.recent.get(request) if rule.rechecked else None
        if principal is not None:
            return principal
        page = page_path(scope["path"])
        try:
            principal = await run_in_threadpool(self.identify, request, page)
        except DATABASE_DOWN as exc:
            log.warning("database unavailable", extra={"path": scope["path"], "error": str(exc.orig)})
            await _json(send, 503, UNAVAILABLE)
            return None
        if principal is None:
            allowed = allowed_methods(self.router.routes, scope)
            if allowed and request.method not in allowed:
                await _not_allowed(send, request.method, allowed)
            elif page:
                answer = self.sign_in(request)
                answer.headers["connection"] = "close"  # the body was never read
                await answer(scope, receive, send)
            else:
                await _json(send, 401, unidentified(request, "missing or invalid credentials"))
            return None
        if rule.rechecked:
            self.recent.remember(request, principal)
        return principal

    async def _capped(self, scope: Scope, receive: Receive, send: Send, limit: int, rule: BodyRule) -> None:
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
                        await _json(
                            send, 413, f"body is over the {limit}-byte limit{rule.advice}", rule.pagerduty
                        )
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


class RecentTokens:
    """Bearer tokens the gate found live in the last ``RECENT_S`` seconds, by the hash of their secret.

    Read and written on the event loop only. Only tokens are kept: a session cookie is judged afresh."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, tuple[float, Principal]] = OrderedDict()

    @staticmethod
    def _key(request: Request) -> str | None:
        secret = bearer_secret(request)
        return hash_secret(secret) if secret else None

    def get(self, request: Request) -> Principal | None:
        key = self._key(request)
        seen = self._seen.get(key) if key else None
        if seen is None or monotonic() - seen[0] > RECENT_S:
            return None
        return seen[1]

    def remember(self, request: Request, principal: Principal) -> None:
        key = self._key(request)
        if key is None or principal.kind != "token":
            return
        self._seen[key] = (monotonic(), principal)
        self._seen.move_to_end(key)
        while len(self._seen) > RECENT_TOKENS:
            self._seen.popitem(last=False)


async def _json(
    send: Send, status: int, detail: str, pagerduty: bool = False, more: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    content = pagerduty_error("invalid event", "Event object is too large", [detail]) if pagerduty else None
    body = json.dumps(content or {"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *more]
    if status == 401:
        headers.append(CHALLENGE)
    if status == 503:
        headers += [(k.lower().encode(), v.encode()) for k, v in RETRY_AFTER.items()]
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _not_allowed(send: Send, method: str, allowed: list[str]) -> None:
    listed = ", ".join(allowed)
    await _json(send, 405, f"{method} is not allowed here; use {listed}", more=((b"allow", listed.encode()),))


def gate_principal(request: Request) -> Principal | None:
    """The caller the gate identified for this request, when it did."""
    principal = getattr(request.state, PRINCIPAL_KEY, None)
    return principal if isinstance(principal, Principal) else None
