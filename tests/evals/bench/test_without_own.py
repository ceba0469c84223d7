"""The corpus bank without the query's own record: the ranks a briefing would have seen."""

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from evals.bench.without_own import WithoutOwn, renumbered
from memory.bank import RecalledIncident
from tests.memory.fakes import CHANNEL_ORDERS, RANKED_IDS, ListRecall, ranked


def _incident(ident: str, why: dict[str, int]) -> RecalledIncident:
    return RecalledIncident(ident, ident, None, 0.5, why, [], {}, None)


@given(keyword=CHANNEL_ORDERS, semantic=CHANNEL_ORDERS, own=st.sampled_from(RANKED_IDS))
def test_the_ranks_are_those_of_a_bank_without_the_record(
    keyword: list[str], semantic: list[str], own: str
) -> None:
    with_own = ranked({"keyword": keyword, "semantic": semantic})
    without = ranked(
        {"keyword": [i for i in keyword if i != own], "semantic": [i for i in semantic if i != own]}
    )
    expected = {i.id: i.why for i in without}
    got = renumbered(with_own, own)
    assert {i.id: i.why for i in got} == expected
    assert [i.id for i in got] == [i.id for i in with_own if i.id != own]


def test_results_without_the_record_are_left_as_they_are() -> None:
    found = [_incident("R1", {"keyword": 2}), _incident("R2", {"semantic": 1})]
    assert renumbered(found, "R9") == found


def test_the_bank_asks_one_more_and_keeps_as_many_as_asked() -> None:
    """The query's own record takes a place in the results; the others still fill ``limit``."""
    bank = ListRecall(
        [_incident("own", {"keyword": 1}), _incident("R1", {"keyword": 2}), _incident("R2", {"keyword": 3})]
    )
    found = asyncio.run(WithoutOwn(bank, "own").recall(query="q", limit=2))
    assert bank.limits == [3]
    assert [(i.id, i.why) for i in found] == [("R1", {"keyword": 1}), ("R2", {"keyword": 2})]
    assert WithoutOwn(bank, "own").ranking_model == "embedded:test"
