"""Signed-in people: the session cookie, its signing key, CSRF tokens and the trusted SSO header.

The cookie is signed (itsdangerous, through Starlette's session middleware), HttpOnly and
SameSite=Lax, and marked Secure whenever the request arrived over TLS (directly, or through a proxy
listed in ``RECALLOPS_TRUSTED_PROXIES``). It carries the secret of a server-side session
(``incidents.auth.sessions``) and the CSRF token; every request looks the session up, so sign-out,
a password change, disabling the user, "sign out everywhere", the idle timeout and the absolute
lifetime end it at once on every replica. Every form carries the session's CSRF token and every page
POST checks it.
"""

import os
import secrets
from datetime import timedelta

from fastapi import FastAPI, Request
from sqlalchemy.orm import Session
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from incidents.auth import sessions as server_sessions
from incidents.auth import users
from incidents.auth.models import User
from incidents.locking import serialized_writes
from web.app.settings import WebSettings
from web.http.security import ROLE_SCOPES, Principal

SESSION_COOKIE = "recallops_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SECRET_FILE = "secret_key"


def secret_key(settings: WebSettings) -> str:
    """RECALLOPS_SECRET_KEY, else a key generated once into the data directory (owner-readable only).

    The file appears whole or not at all (written aside, then hard-linked into place), so processes
    starting together agree on one key and a crash never leaves an empty one behind.
    """
    if settings.secret_key:
        return settings.secret_key
    path = settings.data_dir / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(48))
                handle.flush()
                os.fsync(handle.fileno())
            os.link(draft, path)
        except FileExistsError:
            pass  # another process linked its key first; use theirs
        finally:
            draft.unlink()
    key = path.read_text().strip()
    if not key:
        raise ValueError(f"{path} is empty: delete it to generate a new key, or set RECALLOPS_SECRET_KEY")
    return key


class SessionCookies:
    """Starlette's session middleware twice over: the Secure flag follows the scheme of each request."""

    def __init__(self, app: ASGIApp, *, key: str, max_age_s: int) -> None:
        options = {"secret_key": key, "session_cookie": SESSION_COOKIE, "max_age": max_age_s}
        self._plain = SessionMiddleware(app, same_site="lax", https_only=False, **options)  # type: ignore[arg-type]
        self._secure = SessionMiddleware(app, same_site="lax", https_only=True, **options)  # type: ignore[arg-type]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secure = scope["type"] in ("http", "websocket") and scope.get("scheme") in ("https", "wss")
        await (self._secure if secure else self._plain)(scope, receive, send)


def install(app: FastAPI, settings: WebSettings) -> None:
    app.add_middleware(SessionCookies, key=secret_key(settings), max_age_s=int(settings.session_lifetime_s))


def csrf_token(request: Request) -> str:
    """This session's CSRF token, created on first use."""
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(32)
    return token


def csrf_valid(request: Request, submitted: str | None) -> bool:
    expected = request.session.get("csrf")
    return bool(expected and submitted) and secrets.compare_digest(str(expected), str(submitted))


def policy(settings: WebSettings) -> server_sessions.SessionPolicy:
    return server_sessions.SessionPolicy(
        idle=timedelta(seconds=settings.session_idle_s),
        lifetime=timedelta(seconds=settings.session_lifetime_s),
    )


def sign_in(request: Request, db_session: Session, user: User) -> None:
    """A fresh session (nothing carried over from before sign-in), a new CSRF token; the caller commits."""
    secret = server_sessions.start_session(db_session=db_session, user=user)
    request.session.clear()
    request.session.update({"sid": secret, "csrf": secrets.token_urlsafe(32)})


def sign_out(request: Request, db_session: Session) -> None:
    """End this session on the server (every replica), then forget the cookie; the caller commits."""
    secret = request.session.get("sid")
    if isinstance(secret, str):
        server_sessions.end_session(db_session=db_session, secret=secret)
    request.session.clear()


def user_principal(request: Request, db_session: Session, settings: WebSettings) -> Principal | None:
    """The signed-in person: the trusted SSO header when configured and present, else the session cookie."""
    if settings.sso_header:
        name = request.headers.get(settings.sso_header)
        if name:
            user = users.get_user(db_session=db_session, name=name.strip())
            return _principal(user) if user is not None and user.disabled_at is None else None
    secret = request.session.get("sid") if "session" in request.scope else None
    if not isinstance(secret, str):
        return None
    live = server_sessions.live_session(db_session=db_session, secret=secret, policy=policy(settings))
    if live is None:
        request.session.clear()
        return None
    if live.needs_touch:
        with serialized_writes(db_session):
            server_sessions.touch(db_session=db_session, session_id=live.id)
            db_session.commit()
    return _principal(live.user)


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def api_user_principal(request: Request, db_session: Session) -> Principal | None:
    """A signed-in person calling the JSON API from a page.

    Cookies and the SSO header travel with every browser request, whoever caused it, so a change
    (any method but GET, HEAD, OPTIONS) also needs this session's CSRF token in ``X-CSRF-Token``.
    """
    principal = user_principal(request, db_session, request.app.state.container.settings.web)
    if principal is None or request.method in SAFE_METHODS:
        return principal
    return principal if csrf_valid(request, request.headers.get(CSRF_HEADER)) else None


def from_sso(request: Request, settings: WebSettings) -> bool:
    return bool(settings.sso_header and request.headers.get(settings.sso_header))


def _principal(user: User) -> Principal:
    return Principal(
        name=user.name, kind="user", scopes=ROLE_SCOPES.get(user.role, frozenset()), role=user.role
    )
