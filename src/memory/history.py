"""Historical incidents and runbooks as they arrive from outside: validation and parsing.

The import format is one JSON object per line (or a JSON list), each holding ``incident_id``,
``service`` and the labeled template's fields (``memory.template.FIELDS``: ``timestamp``, ``symptom``,
``error_signature``, ``root_cause``, ``resolution_steps``, ``outcome``; optional ``runbook_used``,
``resolution_kind`` (fixed, mitigated, self-recovered, false-alarm or duplicate), ``failed_attempts``
and ``resolved_by``);
plus the optional ``severity`` and ``title`` the incident store shows. Unknown keys are refused, so a
misspelt field is reported instead of silently dropped. A bad line rejects that line only, with its
reason; the others are imported. Only incident records come in this way: a line with a ``kind``
other than ``incident`` is refused (runbooks change through ``recallops seed``).
"""

import heapq
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    ValidationError,
    field_validator,
)

from incidents.time_input import plausible, written_out
from memory import runbooks
from memory.schema import IncidentRecord, normalize_resolution_kind
from memory.template import FIELDS, TemplateField, model_of

MAX_TEXT = 20_000
SHOWN_REJECTIONS = 100  # an import's answer lists this many rejections at most, and counts the rest
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ID = re.compile(r"[^\s/?#%\\]{1,64}")


def _page_id(value: str) -> str:
    """An id becomes a page address (``/records/<id>``), so it holds no space, ``/ ? # %`` or ``\\``."""
    if not _ID.fullmatch(value):
        raise ValueError("must be 1-64 characters without spaces or / ? # % \\ (it names a page)")
    return value


PageId = Annotated[str, AfterValidator(_page_id)]

RequiredText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TEXT)]
OptionalText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_TEXT)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        if isinstance(value, str) and _UNSTORABLE.search(value):
            raise ValueError("contains NUL or an unpaired surrogate")
        return value


def _utc(value: datetime | date) -> datetime:
    """Dates become midnight UTC; times without a zone are taken as UTC."""
    if not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _plausible(value: datetime | date) -> datetime:
    """A row's time as UTC, refused as that field's error when it cannot be when the incident happened
    (before 1970, more than a day ahead): an import line and a draft's edit say so as it is given."""
    return plausible(_utc(value))


def _imported(field: TemplateField) -> Any:
    """How the import validates one template field: its kind and whether a post-mortem requires it.
    Text is held to ``MAX_TEXT`` whatever the form allows, so any stored history can come back in."""
    if field.kind == "time":
        return Annotated[datetime | date, BeforeValidator(written_out), AfterValidator(_plausible)], ...
    if field.kind == "line":
        return Annotated[str, StringConstraints(strip_whitespace=True, max_length=field.max_length)], ""
    if field.kind == "kind":
        return Annotated[OptionalText, AfterValidator(normalize_resolution_kind)], ""
    return (RequiredText, ...) if field.required else (OptionalText, "")


class _Row(_Strict):
    """The typed part of a row; the template's fields are added from ``memory.template.FIELDS``."""

    incident_id: PageId
    service: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255, pattern=r"^[^\n]*$")
    ]
    severity: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32)] = (
        "unknown"
    )
    title: Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)] = ""

    def record(self) -> IncidentRecord:
        template = self.model_dump(include={f.name for f in FIELDS})
        template["timestamp"] = _utc(template["timestamp"])
        return IncidentRecord(incident_id=self.incident_id, service=self.service, **template)

    def display_title(self) -> str:
        first_line = str(self.model_dump(include={"symptom"})["symptom"]).split("\n", 1)[0]
        return self.title or (first_line if len(first_line) <= 120 else first_line[:119] + "…")


if TYPE_CHECKING:
    HistoryRow = _Row
else:
    HistoryRow = model_of(
        "HistoryRow",
        _Row,
        "One historical incident in the import format.",
        {field.name: _imported(field) for field in FIELDS},
    )


class Runbook(_Strict):
    """A runbook, retained as free text under its id with ``kind:runbook`` and its service."""

    runbook_id: PageId
    service: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255, pattern=r"^[^\n]*$")
    ]
    title: RequiredText
    updated: datetime | date
    body: RequiredText

    def text(self) -> str:
        return f"{runbooks.HEADER} {self.runbook_id} — {self.service}\nTitle: {self.title}\n{self.body}"

    def timestamp(self) -> datetime:
        return _utc(self.updated)


class Rejected(BaseModel):
    """A line (1-based) or list position that was not imported, and why."""

    line: int
    incident_id: str | None
    reasons: list[str]


@dataclass
class Rejections:
    """Every rejection counted, but only the first ``limit`` after line ``after`` kept: a junk import
    of a million lines is answered with one page of reasons and a count, not a million reasons."""

    after: int = 0
    limit: int = SHOWN_REJECTIONS
    count: int = 0
    _skipped: int = 0
    _kept: list[tuple[int, int, Rejected]] = field(default_factory=list)  # a max-heap on the line

    def add(self, line: int, incident_id: str | None, reasons: list[str]) -> None:
        """Count a rejected line; its ``Rejected`` is built only if this page shows it."""
        self.count += 1
        if line <= self.after:
            self._skipped += 1
            return
        if len(self._kept) >= self.limit and -self._kept[0][0] < line:
            return
        entry = (-line, self.count, Rejected(line=line, incident_id=incident_id, reasons=reasons))
        if len(self._kept) < self.limit:
            heapq.heappush(self._kept, entry)
        else:
            heapq.heapreplace(self._kept, entry)

    def shown(self) -> list[Rejected]:
        return sorted((r for _, _, r in self._kept), key=lambda r: r.line)

    def next_after(self) -> int | None:
        """The ``after`` that shows the next page, or ``None`` when this page holds the last one."""
        if self.count - self._skipped <= len(self._kept):
            return None
        return max(r.line for _, _, r in self._kept)


_TIME_MEMBERS = ("datetime", "date")  # the members of a ``datetime | date`` field, as pydantic names them
TIME_EXAMPLES = "e.g. 2026-03-14 or 2026-03-14T09:42:00Z"


def describe(error: ValidationError) -> list[str]:
    """A refused line's reasons, one per field, as an operator reads them in an import's summary: a
    validator's own sentence without pydantic's "Value error, ", and a time that does not read said
    once with what was given and what to write (pydantic refuses it once per member of the union)."""
    reasons: list[str] = []
    for item in error.errors():
        loc = tuple(item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        if str(item["type"]).startswith(("datetime_", "date_")) and loc[-1:] in [(m,) for m in _TIME_MEMBERS]:
            loc = loc[:-1]
            why = (item.get("ctx") or {}).get("error")
            said = f"{_as_written(item['input'])} is not a date or a time" + (f" ({why})" if why else "")
            message = f"{said}: write it in ISO 8601, {TIME_EXAMPLES}"
        where = ".".join(str(p) for p in loc) or "record"
        reason = f"{where}: {message}"
        if reason not in reasons:
            reasons.append(reason)
    return reasons


def _as_written(value: Any) -> str:
    """A refused value as the line wrote it (JSON), cut short: what the reason quotes back."""
    written = json.dumps(value, ensure_ascii=False, default=str)
    return written if len(written) <= 60 else written[:59] + "…"


class UnreadableImport(ValueError):
    """A JSON-list import that cannot be read at all (so no line of it can be judged on its own)."""


def _loads(text: str) -> Any:
    """``json.loads`` with nesting too deep for the parser reported like any other syntax error."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise json.JSONDecodeError("nested too deeply", text[:64], 0) from exc


def parse_rows(text: str, rejections: Rejections) -> list[tuple[int, HistoryRow]]:
    """Valid rows from JSONL, or from one JSON list (``line`` is then the position); each refused
    line goes to ``rejections``. Lines are read one at a time, never all split up front.

    ``UnreadableImport`` when the body is a JSON list that does not parse."""
    if text.lstrip().startswith("["):
        try:
            loaded = _loads(text)
        except json.JSONDecodeError as exc:
            raise UnreadableImport(f"not a valid JSON list: {exc.msg} at line {exc.lineno}") from exc
        if not isinstance(loaded, list):
            raise UnreadableImport("not a valid JSON list")
        return validate_items(enumerate(loaded, start=1), rejections)
    return validate_items(_json_lines(text, rejections), rejections)


def parse_body(data: bytes, after: int = 0) -> tuple[list[tuple[int, HistoryRow]], Rejections]:
    """An import's raw body: its valid rows, and its rejections with the page after line ``after``.
    ``UnreadableImport`` when it is not UTF-8, holds nothing, or is a JSON list that does not parse."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableImport("body is not UTF-8") from exc
    if not text.strip():
        raise UnreadableImport("empty body: expected one JSON record per line, or a JSON list")
    rejections = Rejections(after=after)
    return parse_rows(text, rejections), rejections


def _json_lines(text: str, rejections: Rejections) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        if not line.strip():
            continue
        try:
            yield number, _loads(line)
        except json.JSONDecodeError as exc:
            rejections.add(number, None, [f"not valid JSON: {exc.msg}"])


def validate_items(items: Iterable[tuple[int, Any]], rejections: Rejections) -> list[tuple[int, HistoryRow]]:
    rows: list[tuple[int, HistoryRow]] = []
    seen: dict[str, int] = {}
    for number, item in items:
        if not isinstance(item, dict):
            rejections.add(number, None, ["expected a JSON object"])
            continue
        label = item.get("incident_id")
        label = label[:64] if isinstance(label, str) and not _UNSTORABLE.search(label) else None
        if item.pop("kind", "incident") != "incident":
            reason = "kind: only incident records can be imported; runbooks change through `recallops seed`"
            rejections.add(number, label, [reason])
            continue
        try:
            row = HistoryRow.model_validate(item)
        except ValidationError as exc:
            rejections.add(number, label, describe(exc))
            continue
        if row.incident_id in seen:
            reason = f"incident_id repeats line {seen[row.incident_id]}"
            rejections.add(number, row.incident_id, [reason])
            continue
        seen[row.incident_id] = number
        rows.append((number, row))
    return rows
