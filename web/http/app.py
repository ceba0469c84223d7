"""The FastAPI application: migrations and memory at start, the worker beside it, routes on top."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from web.app import logs, metrics
from web.app.briefings import track_briefing_jobs
from web.app.container import Container
from web.app.grading import track_grades
from web.app.lanes import Worker
from web.app.memory_outbox import track_memory_outbox
from web.app.notify.deliver import track_delivery_outbox
from web.app.settings import Settings
from web.app.tasks import build_lanes, track_lanes
from web.http import errors, openapi
from web.http.auth import gate_identify
from web.http.gate import BodyGate
from web.http.routes import (
    alerts,
    briefings,
    check_action,
    drafts,
    health,
    incidents,
    labels,
    memory,
    pages,
    profile,
    resolution_conversation,
    resolutions,
)
from web.http.routes.pages.common import form_sign_in
from web.mcp import http as mcp_http


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    logs.configure_logging()  # before any library (the MCP SDK) configures it its own way

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        container = Container.build(settings)
        # The service's channels are the routing event writers read; a command run from another shell,
        # with another configuration or none, leaves them as they are.
        container.notifier.sync(container.sessions)
        app.state.container = container
        logs.hide([*container.notifier.secrets, *settings.secrets()])
        metrics.track_open_incidents(container.sessions)
        track_memory_outbox(container.sessions)
        track_delivery_outbox(container.sessions)
        track_briefing_jobs(container.sessions)
        track_grades(container.sessions)
        container.lanes = build_lanes(container)
        track_lanes(container.lanes)
        if settings.web.run_worker:
            container.worker = Worker(container.lanes, release_loop=container.bank.release_loop)
            container.worker.start()
        try:
            async with mcp_sessions():
                yield
        finally:
            await container.aclose()

    app = FastAPI(
        title="RecallOps",
        version="0.1.0",
        description="Incident response with memory: alerts in, briefings from past incidents out.",
        lifespan=lifespan,
    )
    errors.install(
        app,
        not_found_page=pages.not_found_page,
        unavailable_page=pages.unavailable_page,
        invalid_page=pages.invalid_page,
    )
    openapi.install(app)
    app.include_router(health.router)
    app.include_router(alerts.router)
    app.include_router(incidents.router)
    app.include_router(check_action.router)
    app.include_router(briefings.router)
    app.include_router(resolutions.router)
    app.include_router(labels.router)
    app.include_router(resolution_conversation.router)
    app.include_router(profile.router)
    app.include_router(memory.router)
    app.include_router(drafts.router)
    # Inside the session cookie, so a form refused for want of a session can leave word on the sign-in
    # page; the router is read per request, so routes mounted later are in it.
    app.add_middleware(
        BodyGate,
        settings=settings,
        identify=gate_identify,
        sign_in=form_sign_in,
        nul_page=pages.nul_page,
        router=app.router,
    )
    pages.install(app, settings.web)
    mcp_sessions = mcp_http.mount(app)
    if settings.web.trusted_proxies:  # outermost: the client address and scheme are settled first
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.web.trusted_proxies)
    return app
