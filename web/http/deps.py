"""Request dependencies: the container, and a session whose transaction the request owns."""

from collections.abc import Iterator

from fastapi import Request
from sqlalchemy.orm import Session

from incidents.database import transaction
from web.app.container import Container


def get_container(request: Request) -> Container:
    container: Container = request.app.state.container
    return container


def get_db(request: Request) -> Iterator[Session]:
    """The request's unit of work; write routes also commit explicitly before answering 2xx."""
    with transaction(get_container(request).sessions) as session:
        yield session
