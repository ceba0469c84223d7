"""The evidence list is a value: adding to it makes a new list, and what someone already holds stays."""

import dataclasses
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.evidence import AlertInput, Evidence
from memory import RecalledIncident
from memory.corrections import CorrectionRecord, format_correction
from memory.schema import IncidentRecord, format_record
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


def _recalled(rec: IncidentRecord, rank: int, tags: list[str] | None = None) -> RecalledIncident:
    ranks = {"keyword": rank, "semantic": rank}
    return RecalledIncident(
        rec.incident_id, format_record(rec), rec, 0.5, ranks, tags or [], {}, rec.timestamp
    )


def test_the_relevance_model_picks_the_best_of_a_deep_search_across_services() -> None:
    """A search across every service looks deep; the record of the same failure comes first even when
    recall ranked it low, the alert's own incident never takes a place, and a runbook recall put within
    the limit keeps its place after the records."""
    alert = AlertInput(
        text="FATAL: remaining connection slots are reserved; pool timeout acquiring connection",
        service="checkout-service",
        incident_id="INC-0100",
    )
    unrelated = [
        _recalled(
            record(
                f"INC-{n:04d}",
                "search-service",
                symptom="search results stale for an hour",
                error_signature="index refresh lagging",
                root_cause="a reindex job paused the refresh",
            ),
            n,
        )
        for n in range(1, 8)
    ]
    runbook = RecalledIncident(
        "RB-7", "# Runbook: reindexing", None, 0.4, {"keyword": 2}, ["kind:runbook"], {}, WHEN
    )
    own = _recalled(record("INC-0100"), 3)
    same = _recalled(record("INC-0042", "payment-service"), 9)
    found = [unrelated[0], runbook, own, *unrelated[1:], same]
    ids = [i.id for i in Evidence(alert).most_relevant(found, 3)]
    assert ids[0] == "INC-0042" and ids[-1] == "RB-7" and len(ids) == 3
    assert "INC-0100" not in ids


@given(st.lists(st.integers(1, 30), min_size=0, max_size=30, unique=True), st.integers(1, 8))
def test_a_deep_search_keeps_at_most_its_limit_and_only_what_recall_found(
    ranks: list[int], limit: int
) -> None:
    found = [_recalled(record(f"INC-{r:04d}"), r) for r in ranks]
    picked = Evidence(AlertInput(text="pool timeout", service="checkout-service")).most_relevant(found, limit)
    assert len(picked) == min(limit, len(found))
    assert {i.id for i in picked} <= {i.id for i in found} and len({i.id for i in picked}) == len(picked)
