"""What a resolution conversation answers with: the template fields, each text citing ``[n]``.

A chat model's JSON is read into it (a cited item or a list of steps where text is expected is
flattened into text); the evidence-only drafter builds it as a value, never through JSON.
"""

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, field_validator

from memory.template import POST_MORTEM_NAMES as FIELDS
from memory.template import model_of


class AnswerFields(BaseModel):
    """What the model's answer is read as; its fields are added from ``memory.template``."""


def _flatten(cls: type[BaseModel], value: Any) -> Any:
    """Accept a cited item (``{"text", "citations"}``) or a list of steps where text is expected."""
    if isinstance(value, dict):
        cites = "".join(f" [{n}]" for n in value.get("citations", []) if isinstance(n, int))
        return f"{value.get('text', '')}{cites}"
    if isinstance(value, list):
        return "\n".join(_flatten(cls, item) for item in value)
    return "" if value is None else value


if TYPE_CHECKING:
    DraftAnswer = AnswerFields
else:
    DraftAnswer = model_of(
        "DraftAnswer",
        AnswerFields,
        "The answer of a resolution conversation: the template fields, citations as ``[n]`` in the text.",
        {name: (str, "") for name in FIELDS},
        {"_flatten": field_validator(*FIELDS, mode="before")(classmethod(_flatten))},
    )
