"""``recallops mcp``: the MCP server over stdio, for an assistant or agent that starts it as a process.

Whoever can run this command can already read the database and memory it is configured with, so
stdio asks for no token; over the network, use ``/mcp`` in the running service, which does. Nothing
but MCP messages may reach stdout, so the process logs to stderr only.
"""

from web.cli.common import memory_guard, run


async def _run() -> None:
    from web.app.container import Container
    from web.mcp.server import build_server

    container = Container.build()
    try:
        await build_server(lambda: container).run_stdio_async()
    finally:
        await container.aclose()


def mcp() -> None:
    """Serve RecallOps' read-only MCP tools (recall, briefing, incidents, profile) over stdio."""
    from web.app.logs import configure_logging

    configure_logging("WARNING")  # stderr: stdout carries the protocol
    memory_guard(writes=False)
    run(_run())
