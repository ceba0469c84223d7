"""``recallops serve``."""

import os

import typer


def serve(
    host: str | None = typer.Option(None, help="Address to bind (default RECALLOPS_HOST or 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default RECALLOPS_PORT or 8000)."),
) -> None:
    """Serve the API, the pages and the background worker."""
    import uvicorn

    from web.app.settings import WebSettings

    # The app reads its settings from the environment: the options become that environment, so
    # everything that names the served address (links in chat messages) names the one in use.
    if host:
        os.environ["RECALLOPS_HOST"] = host
    if port:
        os.environ["RECALLOPS_PORT"] = str(port)
    settings = WebSettings()
    uvicorn.run(
        "web.http.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        log_level="info",
        access_log=False,
        proxy_headers=False,  # forwarded headers are judged by the app, against RECALLOPS_TRUSTED_PROXIES
    )
