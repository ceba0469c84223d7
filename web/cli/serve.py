"""``recallops serve``."""

import typer
import uvicorn

from web.app.settings import WebSettings


def serve(
    host: str | None = typer.Option(None, help="Address to bind (default RECALLOPS_HOST or 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default RECALLOPS_PORT or 8000)."),
) -> None:
    """Serve the API, the pages and the background worker."""
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
