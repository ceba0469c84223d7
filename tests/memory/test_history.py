"""An import's rejections: all counted, one page kept, whatever order the rejections arrive in, each
line's reasons in words an operator can act on."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.history import Rejections, parse_rows


@given(
    st.lists(st.integers(1, 400), unique=True).flatmap(st.permutations),
    st.integers(0, 400),
    st.integers(1, 30),
)
def test_the_page_is_the_first_rejections_after_the_line_asked_for(
    lines: list[int], after: int, limit: int
) -> None:
    rejections = Rejections(after=after, limit=limit)
    for line in lines:
        rejections.add(line, None, ["x"])
    later = sorted(line for line in lines if line > after)
    shown = [r.line for r in rejections.shown()]
    assert rejections.count == len(lines) and shown == later[:limit]
    assert rejections.next_after() == (shown[-1] if len(later) > limit else None)


ROW = {
    "incident_id": "PM-2024-031",
    "service": "search-service",
    "timestamp": "2024-11-02T10:00:00Z",
    "symptom": "Search results empty for new products",
    "error_signature": "EsRejectedExecutionException",
    "root_cause": "Bulk queue too small for the import burst",
    "resolution_steps": "Throttled the importer",
    "outcome": "Index caught up in 40 minutes",
}


def reasons_for(**fields: object) -> list[str]:
    rejections = Rejections()
    assert parse_rows(json.dumps({**ROW, **fields}), rejections) == []
    [rejected] = rejections.shown()
    return rejected.reasons


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("02/11/2024", "invalid character in year"),
        ("2024-13-02", "month value is outside expected range of 1-12"),
    ],
)
def test_a_time_that_does_not_read_is_one_reason_saying_what_to_write(given: str, why: str) -> None:
    assert reasons_for(timestamp=given) == [
        f'timestamp: "{given}" is not a date or a time ({why}): write it in ISO 8601, '
        "e.g. 2026-03-14 or 2026-03-14T09:42:00Z"
    ]


def test_a_validators_own_sentence_is_given_as_it_is_written() -> None:
    assert reasons_for(timestamp="2099-01-01") == [
        "timestamp: timestamp 2099-01-01T00:00:00+00:00 is more than a day in the future"
    ]
    [number] = reasons_for(timestamp=1700000000)
    assert number.startswith("timestamp: 1700000000 is a number, not a time")


def test_a_time_that_is_no_text_is_quoted_as_the_line_wrote_it() -> None:
    assert reasons_for(timestamp=None)[0].startswith("timestamp: null is not a date or a time")
    [long] = reasons_for(timestamp="x" * 500)
    assert long.startswith('timestamp: "xxx') and "…" in long and len(long) < 200
