"""Post-mortems, corrections, and the memory outbox written in the same transaction as them."""

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy import JSON, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow
from memory.schema import normalize_resolution_kind
from memory.template import FIELDS as TEMPLATE_FIELDS
from memory.template import POST_MORTEM, POST_MORTEM_NAMES, TemplateField, model_of


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


def _checked(field: TemplateField) -> Any:
    """The validated type of one post-mortem field, from its kind and whether it is required."""
    if field.kind == "kind":
        return KindText
    return RequiredText if field.required else CleanText


def _whole(field: TemplateField) -> tuple[Any, Any]:
    default = ... if field.required else ""
    return _checked(field), Field(default, max_length=field.max_length, description=field.description)


def _partial(field: TemplateField) -> tuple[Any, Any]:
    return _checked(field) | None, Field(default=None, max_length=field.max_length)


class PostMortem(BaseModel):
    """A post-mortem as the API and the form take it. Its fields are ``memory.template.POST_MORTEM``,
    added by ``model_of`` below; ``resolved_by`` is never accepted: it is whoever is signed in."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class StoredResolution(BaseModel):
    """A stored resolution as the API shows it: the template's fields (with ``resolved_by``), then
    its version and times. The fields are added by ``model_of`` below."""

    model_config = ConfigDict(from_attributes=True)


# What a resolution stores of the template: all but the time, which is its ``created_at``.
_STORED = tuple(f for f in TEMPLATE_FIELDS if f.kind != "time")
# The template's field names in the form's order: what imports carry and drafts fill.
TEMPLATE: tuple[str, ...] = POST_MORTEM_NAMES

if TYPE_CHECKING:
    ResolutionFields = PostMortem
    ResolutionCreate = PostMortem
    ResolutionUpdate = PostMortem
    ResolutionRead = StoredResolution
else:
    ResolutionFields = model_of(
        "ResolutionFields",
        PostMortem,
        "The post-mortem template. ``resolved_by`` is never accepted here: it is whoever is signed in.",
        {f.name: _whole(f) for f in POST_MORTEM},
    )
    ResolutionCreate = model_of("ResolutionCreate", ResolutionFields, None, {})
    ResolutionUpdate = model_of(
        "ResolutionUpdate",
        PostMortem,
        "A partial edit: only the fields given change; the record is re-synced under the same id.",
        {f.name: _partial(f) for f in POST_MORTEM},
    )
    ResolutionRead = model_of(
        "ResolutionRead",
        StoredResolution,
        None,
        {
            **{f.name: (str, ...) for f in _STORED},
            "version": (int, ...),
            "created_at": (datetime, ...),
            "updated_at": (datetime, ...),
        },
    )


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
    created: bool = True  # False: the same text already corrected it, and nothing was added
