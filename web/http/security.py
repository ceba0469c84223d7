"""Who is calling and what they may do: bearer tokens with scopes for machines, sessions for people."""

from dataclasses import dataclass
from typing import Literal

from starlette.requests import HTTPConnection

ROLE_SCOPES = {"engineer": frozenset({"read", "incidents:write"}), "viewer": frozenset({"read"})}


@dataclass(frozen=True)
class Principal:
    name: str
    kind: Literal["token", "user"]
    scopes: frozenset[str]
    role: str | None = None

    def can(self, scope: str) -> bool:
        return scope in self.scopes


def unidentified(request: HTTPConnection, default: str) -> str:
    """Why a request names no caller: how to send the token when the header holds it without ``Bearer``
    (``Authorization: rops_...``, as a tired hand writes it), else ``default``."""
    scheme = request.headers.get("authorization", "").partition(" ")[0]
    if scheme and scheme.lower() != "bearer":
        return "the Authorization header needs the Bearer scheme: send 'Authorization: Bearer <token>'"
    return default


def bearer_secret(request: HTTPConnection) -> str | None:
    """The token after ``Bearer``, or ``None`` when the header is absent or another scheme."""
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None
    return secret.strip()
