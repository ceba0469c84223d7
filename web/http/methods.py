"""Which methods a path answers to, for a 405's ``Allow`` header.

Asked of the routes themselves, one method at a time: the router stops at the first route whose path
matches, so its own 405 names that route's methods alone (``/signin`` is a GET route and a POST route),
and included routers keep their routes to themselves, so ``matches`` is the one question every route
answers.
"""

from collections.abc import Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import Scope

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(routes: Sequence[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route answers at the scope's path; empty when no route has the path."""
    return [
        method
        for method in METHODS
        if any(route.matches({**scope, "method": method})[0] == Match.FULL for route in routes)
    ]
