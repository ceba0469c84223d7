"""Request dependencies: the container, and a session whose transaction the request owns."""

from collections.abc import Iterator

from fastapi import Request
from sqlalchemy.orm import Session

from web.container import Container


def get_container(request: Request) -> Container:
    return request.app.state.container


def get_db(request: Request) -> Iterator[Session]:
    """Commit when the handler returns, before the response goes out: a 2xx means it is stored."""
    session = get_container(request).sessions()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
