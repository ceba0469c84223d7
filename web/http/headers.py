"""Security headers on every response: a strict Content-Security-Policy, no sniffing, no framing.

The pages load only their own stylesheet and script files, so the policy allows nothing else: no inline
script, no inline style, no third-party origin. The interactive API docs are the one exception (they
are FastAPI's bundled page with its inline bootstrap script) and get a policy of their own.
"""

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
DOCS_POLICY = "frame-ancestors 'none'; object-src 'none'; base-uri 'none'"
DOCS_PATHS = ("/docs", "/redoc")


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_POLICY if scope["path"].startswith(DOCS_PATHS) else PAGE_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("content-security-policy", policy)
                headers.setdefault("x-content-type-options", "nosniff")
                headers.setdefault("x-frame-options", "DENY")
                headers.setdefault("referrer-policy", "same-origin")
            await send(message)

        await self.app(scope, receive, send_with_headers)
