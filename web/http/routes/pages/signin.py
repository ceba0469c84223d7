"""Sign-in and sign-out, and the site root."""

import math
from datetime import timedelta

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from incidents.auth import throttle, users
from incidents.locking import serialized_writes
from incidents.timeutil import utcnow
from web.http import sessions
from web.http.deps import get_container, get_db
from web.http.routes.pages.common import checked_form, flash, page_user, redirect, render, safe_next
from web.http.security import Principal

router = APIRouter(include_in_schema=False)


@router.get("/")
def root() -> RedirectResponse:
    return redirect("/incidents")


@router.get("/signin", response_model=None)
def signin_form(request: Request, next: str = "/incidents", db: Session = Depends(get_db)) -> Response:
    settings = get_container(request).settings.web
    principal = sessions.user_principal(request, db, settings)
    if principal is not None:
        return redirect(safe_next(next))
    sso_name = request.headers.get(settings.sso_header) if settings.sso_header else None
    return _form(request, next=safe_next(next), name="", error=None, sso_name=sso_name)


@router.post("/signin", response_model=None)
def signin(
    request: Request, form: FormData = Depends(checked_form), db: Session = Depends(get_db)
) -> Response:
    name = str(form.get("name", "")).strip()
    password = str(form.get("password", ""))
    next_path = safe_next(str(form.get("next", "")))
    keys = throttle.keys_for(name, request.client.host if request.client else None)
    wait_s = _admit(request, keys)
    if wait_s is not None:
        return _too_many(request, next_path=next_path, name=name, wait_s=wait_s)
    user = users.authenticate(db_session=db, name=name, password=password) if name and password else None
    if user is None:
        return _form(request, next=next_path, name=name, error="Wrong name or password.", status=401)
    with serialized_writes(db):
        throttle.succeeded(db_session=db, keys=keys)
        sessions.sign_in(request, db, user)
        db.commit()
    return redirect(next_path)


def _admit(request: Request, keys: list[throttle.Key]) -> float | None:
    """Count the attempt in a transaction of its own, committed before the (slow) password check."""
    with get_container(request).sessions() as db, serialized_writes(db):
        wait_s = throttle.admit(db_session=db, keys=keys)
        db.commit()
        return wait_s


@router.post("/signout")
def signout(
    request: Request, _: FormData = Depends(checked_form), db: Session = Depends(get_db)
) -> RedirectResponse:
    with serialized_writes(db):
        sessions.sign_out(request, db)
        db.commit()
    flash(request, "Signed out.")
    return redirect("/signin")


@router.post("/signout/everywhere")
def signout_everywhere(
    request: Request,
    _: FormData = Depends(checked_form),
    principal: Principal = Depends(page_user),
    db: Session = Depends(get_db),
) -> RedirectResponse:
    """End every session of the signed-in person, this one included (a lost laptop, a shared screen)."""
    with serialized_writes(db):
        count = users.sign_out_everywhere(db_session=db, name=principal.name)
        db.commit()
    request.session.clear()
    flash(request, f"Signed out everywhere: {count} session{'' if count == 1 else 's'} ended.")
    return redirect("/signin")


def _form(
    request: Request,
    *,
    next: str,
    name: str,
    error: str | None,
    sso_name: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    context = {"next": next, "name": name, "error": error, "sso_name": sso_name}
    return render(request, "signin.html", context, principal=None, status=status)


def _too_many(request: Request, *, next_path: str, name: str, wait_s: float) -> HTMLResponse:
    """429 without checking the password: when to try again, as a time and in minutes."""
    seconds = math.ceil(wait_s)
    at = utcnow() + timedelta(seconds=seconds)
    error = (
        f"Too many failed sign-ins for this name or from this address. "
        f"Try again after {at:%H:%M:%S} UTC (in {math.ceil(seconds / 60)} min)."
    )
    response = _form(request, next=next_path, name=name, error=error, status=429)
    response.headers["retry-after"] = str(seconds)
    return response
