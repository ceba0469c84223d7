"""Who is calling and what they may do: bearer tokens with scopes for machines, sessions for people."""

from dataclasses import dataclass
from typing import Literal

ROLE_SCOPES = {"engineer": frozenset({"read", "incidents:write"}), "viewer": frozenset({"read"})}


@dataclass(frozen=True)
class Principal:
    name: str
    kind: Literal["token", "user"]
    scopes: frozenset[str]
    role: str | None = None

    def can(self, scope: str) -> bool:
        return scope in self.scopes
