"""What a page says about an address it cannot read: which part of the path or query is wrong, and why.

A hand-edited or pasted URL is a browser's mistake, not an API client's: it gets the site's error
page (422) naming the parameter, the value it had and the rule it broke, never FastAPI's JSON.
"""

from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.routing import APIRoute

from web.http.routes.pages.common import PageError

TITLE = "Bad address"
SHOWN = 40  # characters of an offending value quoted back


def _label(request: Request, kind: str, name: str) -> str:
    """The parameter as the route describes it (``Path(description=...)``), else its name."""
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        params = route.dependant.path_params if kind == "path" else route.dependant.query_params
        for param in params:
            if param.alias == name and param.field_info.description:
                return f"{param.field_info.description} ({name})"
    return name


def _quoted(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= SHOWN else text[:SHOWN] + "…")


def _problem(request: Request, error: dict[str, Any]) -> str:
    loc = [str(part) for part in error.get("loc", ())]
    kind, name = (loc[0], ".".join(loc[1:])) if len(loc) > 1 else ("query", "".join(loc))
    where = "in the address's path" if kind == "path" else "in the address's query"
    value = _quoted(error.get("input", ""))
    return f"{_label(request, kind, name)} {where} is {value}: {error.get('msg', '')}."


def invalid_address(request: Request, errors: Sequence[dict[str, Any]]) -> PageError:
    """The 422 page for path or query parameters that do not validate, one sentence each."""
    return PageError(422, TITLE, " ".join(_problem(request, error) for error in errors))


def nul_in_address(request: Request) -> PageError:
    """The 422 page for a NUL (``%00``) in the URL, which no id or filter can hold: where it is."""
    query = parse_qsl(request.url.query, keep_blank_values=True)
    named = [name for name, value in query if "\x00" in value and "\x00" not in name]
    if "\x00" in request.scope["path"]:
        where = "its path"
    elif named:
        where = "the value of " + ", ".join(named)
    else:
        where = "a parameter's name"
    return PageError(
        422, TITLE, f"The address has a NUL character (%00) in {where}, which no id or filter can hold."
    )
