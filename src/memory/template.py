"""The labeled template's one field list: every field of a resolved incident, in its fixed order.

Everything that names the template's fields reads them from ``FIELDS``: the record text and its
parser (``memory.schema``), the history import rows (``memory.history``), the resolution models the
API and the form validate with (``incidents.resolution.models``), the ``log_incident`` tool's JSON
schema and the drafts (``agent``), and the eval records (``evals``). A field added here reaches all
of them; the typed classes that cannot be built from it (the ``IncidentRecord`` dataclass, the
``resolutions`` table) are checked against it by the tests.

It lives in ``memory``, the lowest layer, because ``incidents`` imports ``memory`` and not the
reverse. It imports nothing of the project.

A model built from the list is bound twice: under ``TYPE_CHECKING`` to its typed base (what the type
checker reads: the config, the fields outside the template, the methods), and at run time to
``model_of(...)``, the base plus the template's fields::

    if TYPE_CHECKING:
        HistoryRow = _Row
    else:
        HistoryRow = model_of("HistoryRow", _Row, "One historical incident...", {...})
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, create_model

M = TypeVar("M", bound=BaseModel)

# How an incident ended.
RESOLUTION_KINDS = ("fixed", "mitigated", "self-recovered", "false-alarm", "duplicate")

# time: a timezone-aware instant; text: free text, several lines; line: one line; kind: one of
# RESOLUTION_KINDS, or empty when not recorded.
FieldKind = Literal["time", "text", "line", "kind"]


@dataclass(frozen=True)
class TemplateField:
    """One field. ``required``: a post-mortem cannot be stored without it. ``post_mortem``: the
    engineer writes it (the time and the resolver are filled by the server). ``max_length``: the most
    a post-mortem's field holds. ``aliases``: other words an engineer heads that part of their notes
    with, besides the field's own name. ``since_version``: the template version that added it; a
    record of an older version lacks it and parses with it not recorded."""

    name: str
    label: str
    kind: FieldKind
    required: bool
    max_length: int | None  # None: not text
    description: str
    post_mortem: bool = True
    aliases: tuple[str, ...] = ()
    since_version: int = 1

    @property
    def words(self) -> str:
        """The name as words: ``root_cause`` -> ``root cause``."""
        return self.name.replace("_", " ")


FIELDS: tuple[TemplateField, ...] = (
    TemplateField("timestamp", "Timestamp", "time", True, None, "When it happened.", post_mortem=False),
    TemplateField(
        "symptom",
        "Symptom",
        "text",
        True,
        20_000,
        "What was observed: alerts, errors, user impact.",
        aliases=(
            "symptoms",
            "impact",
            "what happened",
            "summary",
            "issue summary",
            "detection",
            "tl;dr",
            "tldr",
            "what we saw",
            "what people saw",
            "what users saw",
        ),
    ),
    TemplateField(
        "error_signature",
        "Error signature",
        "text",
        True,
        5_000,
        "The error as logs or metrics show it.",
        aliases=("signature", "error", "errors"),
    ),
    TemplateField(
        "root_cause",
        "Root cause",
        "text",
        True,
        20_000,
        "Why it happened, as verified.",
        aliases=("cause", "why", "whys", "root causes", "contributing factors", "trigger", "fault"),
    ),
    TemplateField(
        "resolution_steps",
        "Resolution steps taken",
        "text",
        True,
        20_000,
        "What was done, in order.",
        aliases=(
            "resolution",
            "fix",
            "fixed",
            "fixed by",
            "how we fixed it",
            "what fixed it",
            "steps",
            "mitigation",
            "remediation",
            "recovery",
        ),
    ),
    TemplateField(
        "runbook_used",
        "Runbook used",
        "text",
        False,
        2_000,
        "Runbook name or link, if any.",
        aliases=("runbook",),
    ),
    TemplateField(
        "outcome",
        "Outcome",
        "text",
        True,
        5_000,
        "How it ended: restored, degraded, follow-ups.",
        aliases=("result", "action items", "follow-ups", "next steps", "prevention", "todo", "to do"),
    ),
    TemplateField(
        "resolution_kind",
        "Resolution kind",
        "kind",
        False,
        32,
        "How it ended: " + ", ".join(RESOLUTION_KINDS) + ". Self-recovered and false-alarm tell the next "
        "on-call that this alert has cleared by itself before; empty when not recorded.",
        aliases=("kind", "ended as"),
        since_version=2,
    ),
    TemplateField(
        "failed_attempts",
        "Failed attempts",
        "text",
        False,
        20_000,
        "What was tried and did not help or made it worse.",
        aliases=(
            "what did not work",
            "what didn't work",
            "tried",
            "failed",
            "did not help",
            "didn't help",
            "made it worse",
            "made things worse",
        ),
    ),
    TemplateField("resolved_by", "Resolved by", "line", False, 255, "Who resolved it.", post_mortem=False),
)
# The fields an engineer writes, in the form's order: what the API, the form, imports and drafts carry.
POST_MORTEM: tuple[TemplateField, ...] = tuple(f for f in FIELDS if f.post_mortem)
POST_MORTEM_NAMES: tuple[str, ...] = tuple(f.name for f in POST_MORTEM)
REQUIRED_NAMES: tuple[str, ...] = tuple(f.name for f in POST_MORTEM if f.required)


def model_of(
    name: str,
    base: type[M],
    doc: str | None,
    fields: Mapping[str, Any],
    validators: dict[str, Callable[..., Any]] | None = None,
) -> type[M]:
    """The pydantic model ``name``: ``base`` plus ``fields`` (``name: (type, default)``), in ``base``'s
    module, documented by ``doc``."""
    return create_model(
        name, __base__=base, __module__=base.__module__, __doc__=doc, __validators__=validators, **fields
    )
