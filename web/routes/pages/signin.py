"""Sign-in and sign-out, and the site root."""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from incidents.auth import users
from web import sessions
from web.deps import get_container, get_db
from web.routes.pages.common import checked_form, redirect, render, safe_next

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
    user = users.authenticate(db_session=db, name=name, password=password) if name and password else None
    if user is None:
        return _form(request, next=next_path, name=name, error="Wrong name or password.", status=401)
    db.commit()
    sessions.sign_in(request, user)
    return redirect(next_path)


@router.post("/signout")
def signout(request: Request, _: FormData = Depends(checked_form)) -> RedirectResponse:
    sessions.sign_out(request)
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
