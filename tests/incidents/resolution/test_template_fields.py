"""The post-mortem's models and table follow ``memory.template``, and a post-mortem survives the trip
from the API body to the stored row, the memory payload and the labeled record."""

import json

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import String

from incidents.resolution.models import (
    TEMPLATE,
    Resolution,
    ResolutionCreate,
    ResolutionFields,
    ResolutionRead,
    ResolutionUpdate,
)
from incidents.resolution.service import payload_record, record_payload
from memory.schema import format_record, parse_record
from memory.template import FIELDS, POST_MORTEM, POST_MORTEM_NAMES, REQUIRED_NAMES, RESOLUTION_KINDS
from tests.incidents.resolution.factories import incident_row

BOOKKEEPING = {"id", "incident_id", "version", "created_at", "updated_at"}
STORED = [f for f in FIELDS if f.kind != "time"]


def test_the_resolutions_table_has_a_column_for_every_stored_field() -> None:
    columns = {c.name: c for c in Resolution.__table__.columns}
    assert set(columns) - BOOKKEEPING == {f.name for f in STORED}
    for field in STORED:
        column_type = columns[field.name].type
        if isinstance(column_type, String) and column_type.length is not None:
            assert column_type.length >= (field.max_length or 0), field.name


def test_the_models_are_the_template_in_its_order() -> None:
    assert TEMPLATE == POST_MORTEM_NAMES
    for model in (ResolutionFields, ResolutionCreate, ResolutionUpdate):
        assert tuple(model.model_fields) == POST_MORTEM_NAMES
    required = tuple(n for n, info in ResolutionFields.model_fields.items() if info.is_required())
    assert required == REQUIRED_NAMES
    assert not any(info.is_required() for info in ResolutionUpdate.model_fields.values())
    assert list(ResolutionRead.model_fields) == [f.name for f in STORED] + [
        "version",
        "created_at",
        "updated_at",
    ]
    for field in POST_MORTEM:
        schema = ResolutionFields.model_json_schema()["properties"][field.name]
        assert (schema["maxLength"], schema["description"]) == (field.max_length, field.description)


def _text(required: bool) -> st.SearchStrategy[str]:
    text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200)
    stripped = text.map(str.strip)
    return stripped.filter(bool) if required else stripped


post_mortems = st.fixed_dictionaries(
    {
        f.name: st.sampled_from(("", *RESOLUTION_KINDS)) if f.kind == "kind" else _text(f.required)
        for f in POST_MORTEM
    }
)


@given(post_mortems)
def test_a_post_mortem_survives_the_row_the_payload_and_the_record(values: dict[str, str]) -> None:
    body = ResolutionCreate.model_validate(values)
    incident = incident_row(status="resolved")
    now = incident.first_seen
    row = Resolution(resolved_by="dana", version=1, created_at=now, updated_at=now, **body.model_dump())
    read = ResolutionRead.model_validate(row).model_dump()
    assert {name: read[name] for name in POST_MORTEM_NAMES} == values
    payload = json.loads(json.dumps(record_payload(incident, row, [])))
    record = parse_record(format_record(payload_record(payload)))
    assert {name: getattr(record, name) for name in POST_MORTEM_NAMES} == values
    assert (record.resolved_by, record.timestamp) == ("dana", now)
    assert ResolutionUpdate.model_validate(values).model_dump(exclude_none=True) == values
