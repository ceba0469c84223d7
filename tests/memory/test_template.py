"""The one field list: the typed record follows it, and a record survives every form it takes.

A record goes from an import row to an ``IncidentRecord``, to the labeled text and back; each hop is
built from ``memory.template.FIELDS``, so a field added there that one hop forgot breaks a test here.
"""

from dataclasses import asdict, fields
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memory.history import HistoryRow, Rejected, Rejections, validate_items
from memory.schema import FIELDS as LABELED
from memory.schema import IncidentRecord, format_record, parse_record
from memory.template import FIELDS, POST_MORTEM, POST_MORTEM_NAMES, RESOLUTION_KINDS

# What the import accepts and keeps as given: text without NUL or surrogates, already stripped.
kept = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")).map(str.strip)
required = kept.filter(bool)


def _value(name: str) -> st.SearchStrategy[object]:
    field = next(f for f in FIELDS if f.name == name)
    if field.kind == "time":  # a time the import keeps: from 1970 to now (never later)
        return st.datetimes(
            min_value=datetime(1970, 1, 1), max_value=datetime(2026, 1, 1), timezones=st.just(UTC)
        )
    if field.kind == "kind":
        return st.sampled_from(("", *RESOLUTION_KINDS))
    if field.kind == "line":
        return kept.filter(lambda s: "\n" not in s).map(lambda s: s[:255])
    return required if field.required else kept


rows = st.fixed_dictionaries(
    {
        "incident_id": st.from_regex(r"[A-Z]{2,4}-[0-9]{1,6}", fullmatch=True),
        "service": st.from_regex(r"[a-z][a-z-]{0,30}", fullmatch=True),
        **{f.name: _value(f.name) for f in FIELDS},
    }
)


def validate(row: dict[str, object]) -> tuple[list[tuple[int, HistoryRow]], list[Rejected]]:
    rejections = Rejections()
    rows = validate_items([(1, row)], rejections)
    return rows, rejections.shown()


def test_the_typed_record_has_exactly_the_templates_fields() -> None:
    names = [f.name for f in fields(IncidentRecord)]
    assert names[:2] == ["incident_id", "service"]
    assert set(names[2:]) == {f.name for f in FIELDS}


def test_the_record_text_and_the_import_follow_the_one_list_in_order() -> None:
    assert [name for name, _ in LABELED] == [f.name for f in FIELDS]
    template = [name for name in HistoryRow.model_fields if name in {f.name for f in FIELDS}]
    assert template == [f.name for f in FIELDS]
    assert tuple(f.name for f in POST_MORTEM) == POST_MORTEM_NAMES
    assert {"timestamp", "resolved_by"}.isdisjoint(POST_MORTEM_NAMES)


def test_every_field_has_a_label_a_description_and_unique_words() -> None:
    words = [w for f in POST_MORTEM for w in (f.words, *f.aliases)]
    assert len(words) == len(set(words))
    assert all(f.label and f.description for f in FIELDS)
    assert all(f.max_length for f in POST_MORTEM)


@given(rows)
def test_an_imported_row_survives_the_labeled_text(row: dict[str, object]) -> None:
    [(_, parsed)], rejected = validate(dict(row))
    assert rejected == []
    record = parsed.record()
    assert asdict(record) == row
    assert parse_record(format_record(record)) == record


@given(rows)
def test_a_record_goes_back_into_the_import_unchanged(row: dict[str, object]) -> None:
    record = parse_record(format_record(HistoryRow.model_validate(row).record()))
    again = HistoryRow.model_validate(asdict(record)).record()
    assert again == record


def test_a_missing_required_field_is_named_and_optional_ones_default_empty() -> None:
    row = {
        "incident_id": "INC-1",
        "service": "checkout",
        "timestamp": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        **{f.name: "x" for f in POST_MORTEM if f.required},
    }
    [(_, parsed)], _ = validate(dict(row))
    assert all(getattr(parsed.record(), f.name) == "" for f in FIELDS if not f.required)
    for field in (f for f in POST_MORTEM if f.required):
        _, [rejected] = validate({k: v for k, v in row.items() if k != field.name})
        assert rejected.reasons == [f"{field.name}: Field required"]
