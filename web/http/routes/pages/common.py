"""What every page route shares: who is signed in, the CSRF check on forms, rendering, page errors.

A page route parses its input, asks for a principal with the scope it needs, calls a service and
renders. A visitor who is not signed in is sent to the sign-in page with a local ``next`` path: the
page asked for, or for a form whose session ended meanwhile, the page the form was on, with a word
that what was submitted was not saved. A signed-in user without the scope gets a 403 page; a form
without this session's CSRF token is refused.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from incidents.incident import service as incident_service
from incidents.incident.models import Incident
from incidents.locking import serialized_writes
from incidents.resolution.service import ResolutionConflict
from web.http import sessions
from web.http.deps import get_container, get_db
from web.http.security import Principal
from web.http.templating import templates

SESSION_ENDED = "Your session ended, so what you submitted was not saved. Sign in to go back to the page."


class SignInRequired(Exception):
    """``message``: what the sign-in page says first (why the visitor is there)."""

    def __init__(self, next_path: str, message: str | None = None) -> None:
        self.next_path = next_path
        self.message = message


@dataclass
class PageError(Exception):
    """``link``: (address, words) of the page to go on from, when there is one better than the list."""

    status: int
    title: str
    message: str
    link: tuple[str, str] | None = None


def incident_link(public_id: str) -> tuple[str, str]:
    return f"/incidents/{public_id}", f"Open {public_id}"


def safe_next(value: str | None, default: str = "/incidents") -> str:
    """A path on this site, or the default: never another host, scheme or protocol-relative URL."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return default
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return default
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return default
    return value


def _request_path(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def _form_page(request: Request) -> str:
    """The page a submitted form was on: its Referer, when that is this site (browsers send it, as
    ``Referrer-Policy: same-origin`` allows); else the incident list."""
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc != request.url.netloc:
        return "/incidents"
    return referer.path + (f"?{referer.query}" if referer.query else "")


def page_user(request: Request, db: Session = Depends(get_db)) -> Principal:
    principal = sessions.user_principal(request, db, get_container(request).settings.web)
    if principal is None:
        if request.method == "GET":
            raise SignInRequired(_request_path(request))
        raise SignInRequired(_form_page(request), SESSION_ENDED)
    return principal


def form_sign_in(request: Request) -> RedirectResponse:
    """Where a form sent without a live session goes: sign in, then back to the page it was on."""
    return sign_in_redirect(request, SignInRequired(_form_page(request), SESSION_ENDED))


def page_writer(principal: Principal = Depends(page_user)) -> Principal:
    """An engineer: the scope to acknowledge, re-brief and resolve."""
    if not principal.can("incidents:write"):
        raise PageError(403, "Not allowed", "Viewers can read incidents but not change them.")
    return principal


async def checked_form(request: Request) -> FormData:
    """The submitted form, once its CSRF token matches this session's."""
    form = await request.form()
    if any(isinstance(value, str) and "\x00" in value for value in form.values()):
        raise PageError(422, "Bad form", "A field contains a NUL character, which cannot be stored.")
    token = form.get(sessions.CSRF_FIELD)
    if not sessions.csrf_valid(request, token if isinstance(token, str) else None):
        raise PageError(403, "Form expired", "This form is no longer valid. Reload the page and try again.")
    return form


def load_incident(db: Session, public_id: str) -> Incident:
    """The incident, or the 404 page naming the id."""
    incident = incident_service.get_by_public_id(db_session=db, public_id=public_id)
    if incident is None:
        raise PageError(404, "No such incident", f"There is no incident {public_id}.")
    return incident


@contextmanager
def incident_write(request: Request, db: Session, public_id: str, refused: str) -> Iterator[Incident]:
    """One page write: the incident loaded under the write lock, a refused change shown as a 409 page
    titled ``refused`` that links to the incident, the change committed, then the worker woken for what
    it owes (memory, deliveries, briefings)."""
    with serialized_writes(db):
        incident = load_incident(db, public_id)
        try:
            yield incident
        except (incident_service.IncidentError, ResolutionConflict) as exc:
            raise PageError(409, refused, str(exc), incident_link(public_id)) from exc
        db.commit()
    worker = get_container(request).worker
    if worker is not None:
        worker.wake()


def flash(request: Request, text: str, level: str = "ok") -> None:
    """A one-line message for the next page this browser renders (after a redirect)."""
    request.session.setdefault("flash", []).append({"text": text, "level": level})


def redirect(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    principal: Principal | None,
    status: int = 200,
) -> HTMLResponse:
    settings = get_container(request).settings.web
    base = {
        "principal": principal,
        "csrf_token": sessions.csrf_token(request),
        "can_write": bool(principal and principal.can("incidents:write")),
        "sso": sessions.from_sso(request, settings),
        "flashes": request.session.pop("flash", []),
        "nav": "",
    }
    response = templates.TemplateResponse(request, template, base | context, status_code=status)
    response.headers["cache-control"] = "no-store"
    return response


def sign_in_redirect(request: Request, exc: SignInRequired) -> RedirectResponse:
    if exc.message:
        flash(request, exc.message, "warn")
    return RedirectResponse(f"/signin?next={quote(safe_next(exc.next_path), safe='/')}", status_code=303)


def error_page(request: Request, exc: PageError) -> HTMLResponse:
    principal = None
    if "session" in request.scope:
        container = get_container(request)
        with container.sessions() as db:
            principal = sessions.user_principal(request, db, container.settings.web)
    context = {"title": exc.title, "message": exc.message, "status": exc.status, "link": exc.link}
    return render(request, "error.html", context, principal=principal, status=exc.status)
