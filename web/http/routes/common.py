"""What the API routes say alike: the incident id in the path, the errors they document and answer."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import HTTPException, Path

from incidents.incident.service import IncidentNotFound
from memory.service import MemoryUnavailable

PublicId = Annotated[str, Path(min_length=1, max_length=64, description="Readable id, e.g. INC-0001")]
NO_INCIDENT = "no such incident"
Responses = dict[int | str, dict[str, str]]


def errors(scope: str | None, more: dict[int, str] | None = None) -> Responses:
    """401 and 403 (naming the scope when the route has one), then the route's own error answers."""
    lacks = f"lacks the {scope} scope" if scope else "lacks the scope"
    found: Responses = {
        401: {"description": "missing or invalid credentials"},
        403: {"description": lacks},
    }
    for code, description in (more or {}).items():
        found[code] = {"description": description}
    return found


@contextmanager
def incident_errors(public_id: str) -> Iterator[None]:
    """A flow's refusals as the API answers them: no such incident is a 404, memory down a 503."""
    try:
        yield
    except IncidentNotFound as exc:
        raise HTTPException(404, f"no incident {public_id!r}") from exc
    except MemoryUnavailable as exc:
        raise HTTPException(503, f"memory unavailable: {exc}") from exc
