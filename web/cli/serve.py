"""``recallops serve``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from web.app.settings import Settings


def serve(
    host: str | None = typer.Option(None, help="Address to bind (default RECALLOPS_HOST or 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default RECALLOPS_PORT or 8000)."),
) -> None:
    """Serve the API, the pages and the background worker."""
    import uvicorn

    # The app reads its settings from the environment: the options become that environment, so
    # everything that names the served address (links in chat messages) names the one in use.
    if host:
        os.environ["RECALLOPS_HOST"] = host
    if port:
        os.environ["RECALLOPS_PORT"] = str(port)
    settings = _prepare().web
    _free(host or settings.host, port or settings.port)
    uvicorn.run(
        "web.http.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level="info",
        access_log=False,
        proxy_headers=False,  # forwarded headers are judged by the app, against RECALLOPS_TRUSTED_PROXIES
    )


def _free(host: str, port: int) -> None:
    """Exit 2 in one line when the address is taken (the service already runs there, most often), or is
    not this host's, before the app starts: uvicorn would start it (its worker, its channels' routing)
    and only then fail."""
    import errno
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            fix = "choose --port" if exc.errno == errno.EADDRINUSE else "--host takes an address of this host"
            typer.echo(f"recallops: cannot listen on {host}:{port}: {exc.strerror}; {fix}", err=True)
            raise typer.Exit(code=2) from None


def _prepare() -> Settings:
    """Check the settings and channels, bring the schema to head and record which memory the service
    uses (for the admin commands to compare theirs with) before uvicorn starts.

    The app checks the settings and the schema again at start-up, but a failure there is buried in
    uvicorn's lifespan traceback; here it is the one-line reason ``main`` prints (exit 2). The app then
    finds it all done."""
    from incidents.database import make_engine, make_folder, make_session_factory, ready_schema
    from web.app.notify.config import load_channels
    from web.app.service_memory import describe, record_in_use
    from web.app.settings import Settings

    settings = Settings()
    load_channels(settings.notify)
    make_folder(settings.web.data_dir, "RECALLOPS_DATA_DIR")
    engine = make_engine(settings.database_url)
    try:
        incidents = settings.incidents
        ready_schema(engine, migrate=incidents.migrate_on_start, wait_s=incidents.schema_wait_s, waiting=_say)
        before = record_in_use(make_session_factory(engine), settings)
    finally:
        engine.dispose()
    if before is not None:
        _say(f"the service's memory was {describe(before)}; it is now {settings.memory.location}")
    return settings


def _say(note: str) -> None:
    """A line on stderr before a wait, in the form of the one-line errors: the log is not set up yet."""
    typer.echo(f"recallops: {note}", err=True)
