"""Channel ranks counted without some records: the ranks a search would give had they not been there."""

from hypothesis import given
from hypothesis import strategies as st

from memory.bank import RecalledIncident
from memory.ranks import counted_without

IDS = [f"R{n}" for n in range(8)]
ORDERS = st.permutations(IDS).flatmap(lambda p: st.integers(1, len(p)).map(lambda n: list(p[:n])))


def _ranked(orders: dict[str, list[str]]) -> list[RecalledIncident]:
    """Each id with its 1-based rank in every channel that found it."""
    found = {ident for order in orders.values() for ident in order}
    return [
        RecalledIncident(
            i,
            i,
            None,
            0.5,
            {ch: order.index(i) + 1 for ch, order in orders.items() if i in order},
            [],
            {},
            None,
        )
        for i in sorted(found)
    ]


@given(keyword=ORDERS, semantic=ORDERS, skipped=st.sets(st.sampled_from(IDS)))
def test_the_others_are_ranked_as_if_the_skipped_were_not_there(
    keyword: list[str], semantic: list[str], skipped: set[str]
) -> None:
    found = _ranked({"keyword": keyword, "semantic": semantic})
    without = _ranked(
        {
            "keyword": [i for i in keyword if i not in skipped],
            "semantic": [i for i in semantic if i not in skipped],
        }
    )
    got = counted_without(found, skipped)
    assert [i.id for i in got] == [i.id for i in found]
    assert {i.id: i.why for i in got if i.id not in skipped} == {i.id: i.why for i in without}
    assert {i.id: i.why for i in got if i.id in skipped} == {i.id: i.why for i in found if i.id in skipped}


def test_nothing_skipped_leaves_the_ranks_alone() -> None:
    found = _ranked({"keyword": ["R1", "R2"]})
    assert counted_without(found, {"R9"}) == found
