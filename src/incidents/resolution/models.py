"""Post-mortems, corrections, and the memory outbox written in the same transaction as them."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy import JSON, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow
from memory.schema import RESOLUTION_KINDS, normalize_resolution_kind


class Resolution(Base):
    __tablename__ = "resolutions"

    id: Mapped[int] = mapped_column(primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), unique=True)
    symptom: Mapped[str] = mapped_column(Text)
    error_signature: Mapped[str] = mapped_column(Text)
    root_cause: Mapped[str] = mapped_column(Text)
    resolution_steps: Mapped[str] = mapped_column(Text)
    runbook_used: Mapped[str] = mapped_column(Text, default="")
    outcome: Mapped[str] = mapped_column(Text)
    failed_attempts: Mapped[str] = mapped_column(Text, default="")
    resolution_kind: Mapped[str] = mapped_column(String(32), default="", server_default="")
    resolved_by: Mapped[str] = mapped_column(String(255))
    version: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Correction(Base):
    __tablename__ = "corrections"

    id: Mapped[int] = mapped_column(primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    text: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class OutboxEntry(Base):
    """A memory write owed: pending until a worker retains it, failing (with why and when next) meanwhile."""

    __tablename__ = "memory_outbox"
    __table_args__ = (
        Index("ix_memory_outbox_due", "state", "next_attempt_at"),
        # At most one undelivered write per document: a newer edit rewrites it, so deliveries never race.
        Index(
            "uq_memory_outbox_open_document",
            "document_id",
            unique=True,
            sqlite_where=text("state != 'synced'"),
            postgresql_where=text("state != 'synced'"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), nullable=True, index=True)
    document_id: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16))  # incident | correction | runbook
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    generation: Mapped[int] = mapped_column(default=1)  # bumped when a newer write replaces the payload
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending | synced | failing
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


def _required_text(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be blank")
    return stripped


def _no_nul(value: str) -> str:
    """NUL is never meaningful in a post-mortem, and PostgreSQL text cannot store it."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


CleanText = Annotated[str, AfterValidator(_no_nul)]
RequiredText = Annotated[str, AfterValidator(_no_nul), AfterValidator(_required_text)]
KindText = Annotated[str, AfterValidator(normalize_resolution_kind)]
KIND_HELP = (
    "How it ended: " + ", ".join(RESOLUTION_KINDS) + ". Self-recovered and false-alarm tell the next "
    "on-call that this alert has cleared by itself before; empty when not recorded."
)


class ResolutionFields(BaseModel):
    """The post-mortem template. ``resolved_by`` is never accepted here: it is whoever is signed in."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    symptom: RequiredText = Field(
        max_length=20_000, description="What was observed: alerts, errors, user impact."
    )
    error_signature: RequiredText = Field(
        max_length=5_000, description="The error as logs or metrics show it."
    )
    root_cause: RequiredText = Field(max_length=20_000, description="Why it happened, as verified.")
    resolution_steps: RequiredText = Field(max_length=20_000, description="What was done, in order.")
    runbook_used: CleanText = Field(default="", max_length=2_000, description="Runbook name or link, if any.")
    outcome: RequiredText = Field(
        max_length=5_000, description="How it ended: restored, degraded, follow-ups."
    )
    resolution_kind: KindText = Field(default="", max_length=32, description=KIND_HELP)
    failed_attempts: CleanText = Field(
        default="", max_length=20_000, description="What was tried and did not help or made it worse."
    )


# The template's field names in the form's order: what imports carry and drafts fill.
TEMPLATE: tuple[str, ...] = tuple(ResolutionFields.model_fields)


class ResolutionCreate(ResolutionFields):
    pass


class ResolutionUpdate(BaseModel):
    """A partial edit: only the fields given change; the record is re-synced under the same id."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    symptom: RequiredText | None = Field(default=None, max_length=20_000)
    error_signature: RequiredText | None = Field(default=None, max_length=5_000)
    root_cause: RequiredText | None = Field(default=None, max_length=20_000)
    resolution_steps: RequiredText | None = Field(default=None, max_length=20_000)
    runbook_used: CleanText | None = Field(default=None, max_length=2_000)
    outcome: RequiredText | None = Field(default=None, max_length=5_000)
    resolution_kind: KindText | None = Field(default=None, max_length=32)
    failed_attempts: CleanText | None = Field(default=None, max_length=20_000)


class ResolutionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    symptom: str
    error_signature: str
    root_cause: str
    resolution_steps: str
    runbook_used: str
    outcome: str
    resolution_kind: str
    failed_attempts: str
    resolved_by: str
    version: int
    created_at: datetime
    updated_at: datetime


class CorrectionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: RequiredText = Field(
        max_length=20_000, description="What the record got wrong, and what is true instead."
    )


class CorrectionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    text: str
    author: str
    created_at: datetime


class MemoryStatusRead(BaseModel):
    """Where the incident's memory writes stand: pending, synced or failing (with why and when next)."""

    model_config = ConfigDict(from_attributes=True)

    state: str | None
    documents: int = 0
    attempts: int = 0
    last_error: str | None = None
    next_attempt_at: datetime | None = None
    synced_at: datetime | None = None


class ResolutionResult(BaseModel):
    incident: str
    status: str
    created: bool
    resolution: ResolutionRead
    memory: MemoryStatusRead


class CorrectionResult(BaseModel):
    incident: str
    correction: CorrectionRead
    document_id: str
    memory: MemoryStatusRead
