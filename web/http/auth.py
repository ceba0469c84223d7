"""Who is calling, and may they: ``current_principal`` and the ``require(scope)`` dependency.

Machines send ``Authorization: Bearer <token>``; the token's scopes decide. A request that carries a
bearer token is judged by it alone (a wrong token is a 401, never a fallback to something else).
People are added here too: ``current_principal`` is the one place a new kind of caller is recognised.
"""

from collections.abc import Awaitable, Callable

from fastapi import Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from incidents.auth import tokens
from incidents.locking import serialized_writes
from web.http import sessions
from web.http.deps import get_container
from web.http.gate import gate_principal
from web.http.security import Principal, bearer_secret, unidentified

bearer_scheme = HTTPBearer(auto_error=False, description="An API token from `recallops token create`.")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="recallops"'}


def token_principal(db_session: Session, secret: str) -> Principal | None:
    token = tokens.verify_token(db_session=db_session, secret=secret)
    if token is None:
        return None
    _mark_used(db_session, token)
    return Principal(name=token.name, kind="token", scopes=token.scopes)


def _mark_used(db_session: Session, token: tokens.LiveToken) -> None:
    if not tokens.needs_touch(token):
        return
    with serialized_writes(db_session):
        tokens.touch(db_session=db_session, token=token)
        db_session.commit()


def current_principal(request: Request, db_session: Session) -> Principal | None:
    """The caller, or ``None`` when anonymous or unrecognised: a bearer token, else a signed-in user."""
    secret = bearer_secret(request)
    if secret is not None:
        return token_principal(db_session, secret)
    return sessions.api_user_principal(request, db_session)


def recheck(request: Request, principal: Principal, db_session: Session) -> None:
    """401 when the caller's token is no longer live, asked inside the route's own write transaction.

    For routes the gate lets in on a recent check (``BodyRule.rechecked``): a token revoked since then
    writes nothing. Reads only; the gate's own check recorded the token's use."""
    secret = bearer_secret(request)
    if principal.kind == "token" and (
        secret is None or tokens.verify_token(db_session=db_session, secret=secret) is None
    ):
        raise HTTPException(401, "missing or invalid bearer token", headers=CHALLENGE)


def authorize(principal: Principal | None, scope: str, request: Request | None = None) -> Principal:
    """401 without a valid credential (saying how to send one, given the ``request``), 403 when it
    lacks ``scope``."""
    if principal is None:
        detail = "missing or invalid bearer token"
        if request is not None:
            detail = unidentified(request, detail)
        raise HTTPException(401, detail, headers=CHALLENGE)
    if not principal.can(scope):
        raise HTTPException(403, f"{principal.name!r} lacks the {scope!r} scope")
    return principal


def identify(request: Request) -> Principal | None:
    """``current_principal`` in a short session of its own: no connection is held afterwards, while
    the request reads its body or waits for its turn to write. The gate's answer, when it gave one."""
    known = gate_principal(request)
    if known is not None:
        return known
    with get_container(request).sessions() as db_session:
        return current_principal(request, db_session)


def gate_identify(request: Request, page: bool) -> Principal | None:
    """The caller as the body gate needs it: a page form by its session, the API by ``identify``."""
    if not page:
        return identify(request)
    container = get_container(request)
    with container.sessions() as db_session:
        return sessions.user_principal(request, db_session, container.settings.web)


def require(scope: str) -> Callable[..., Awaitable[Principal]]:
    """A dependency returning the caller when it holds ``scope``; nothing runs or is stored otherwise."""

    async def dependency(
        request: Request,
        _credentials: HTTPAuthorizationCredentials | None = Depends(bearer_scheme),
    ) -> Principal:
        # The gate has identified every request with a body: no worker thread is needed to read it back.
        known = gate_principal(request)
        found = known if known is not None else await run_in_threadpool(identify, request)
        return authorize(found, scope, request)

    return dependency
