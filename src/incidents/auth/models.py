"""API tokens for senders and automation, and local user accounts. Only hashes are stored."""

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)  # sha256 of the secret
    prefix: Mapped[str] = mapped_column(String(16))  # first characters, to recognise a token in a list
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)  # None: SSO only
    role: Mapped[str] = mapped_column(String(16))  # engineer | viewer
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class UserSession(Base):
    """A signed-in browser. The cookie holds the secret; the row decides whether it still counts, so
    ending a session (sign-out, password change, disable, "everywhere") holds on every replica."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the cookie's secret
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    ended_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)


class SignInFailure(Base):
    """Failed sign-ins counted against one key (a name at an address, or an address), shared by replicas."""

    __tablename__ = "signin_failures"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 of the key's text
    failures: Mapped[int] = mapped_column(Integer, default=0)
    last_failure_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    blocked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
