"""The evidence list is a value: adding to it makes a new list, and what someone already holds stays."""

import dataclasses
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.evidence import AlertInput, Evidence
from memory import RecalledIncident
from memory.corrections import CorrectionRecord, format_correction
from memory.schema import format_record
from tests.agent.fakes import record

WHEN = datetime(2026, 4, 1, tzinfo=UTC)


def _incident(n: int) -> RecalledIncident:
    rec = record(f"INC-{n:04d}")
    return RecalledIncident(rec.incident_id, format_record(rec), rec, 0.5, {}, [], {}, rec.timestamp)


def _correction(n: int, k: int) -> RecalledIncident:
    doc_id = f"INC-{n:04d}-correction-{k}"
    text = format_correction(
        CorrectionRecord(doc_id, f"INC-{n:04d}", "checkout-service", WHEN, f"cause number {k}", "lee")
    )
    tags = ["service:checkout-service", "kind:correction"]
    return RecalledIncident(doc_id, text, None, 0.5, {}, tags, {"corrects": f"INC-{n:04d}"}, WHEN)


# A recall's documents: an incident (n) or a correction (n, k) to incident n.
_DOCS = st.one_of(
    st.integers(1, 4).map(_incident),
    st.tuples(st.integers(1, 4), st.integers(1, 3)).map(lambda nk: _correction(*nk)),
)


def _seen(evidence: Evidence) -> object:
    """Everything a holder reads of the list, copied out."""
    matches = {k: (m.item.text, m.corrections) for k, m in evidence.matches.items()}
    return [i.model_dump() for i in evidence.items], matches, dict(evidence.pending_corrections)


@given(st.lists(st.lists(_DOCS, max_size=5), max_size=4))
def test_what_a_holder_saw_never_changes_when_the_list_grows(batches: list[list[RecalledIncident]]) -> None:
    evidence = Evidence(AlertInput(text="checkout pool exhausted", service="checkout-service"))
    held: list[tuple[Evidence, object]] = []
    for batch in batches:
        held.append((evidence, _seen(evidence)))
        evidence, matches = evidence.with_incidents(batch)
        assert [m.item for m in matches] == [evidence.matches[m.incident.id].item for m in matches]
    for before, seen in held:
        assert _seen(before) == seen
    assert [item.n for item in evidence.items] == list(range(1, len(evidence.items) + 1))
    for match in evidence.matches.values():  # a match and its listed item are one value
        assert evidence.items[match.item.n - 1] == match.item


@given(st.permutations([_incident(1), _correction(1, 1), _correction(1, 2)]))
def test_a_correction_amends_its_incident_whichever_arrives_first(docs: list[RecalledIncident]) -> None:
    evidence, _ = Evidence(AlertInput(text="checkout pool exhausted")).with_incidents(docs)
    [item] = [i for i in evidence.items if i.id == "INC-0001"]
    assert item.text.count("CORRECTION (supersedes the record below)") == 2
    assert item.text.index("CORRECTION") < item.text.index("--- original record ---")


def test_nothing_the_list_carries_can_be_changed_in_place() -> None:
    evidence, _ = Evidence(AlertInput(text="checkout pool exhausted")).with_incidents([_incident(1)])
    with pytest.raises(dataclasses.FrozenInstanceError):
        evidence.items = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        evidence.matches["INC-0002"] = evidence.matches["INC-0001"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        evidence.matches["INC-0001"].corrections = ("later",)  # type: ignore[misc]
    with pytest.raises(ValueError, match="frozen"):
        evidence.items[1].text = "rewritten"
