"""Channel ranks counted without some records: the ranks a search would give had they not been there."""

from hypothesis import given
from hypothesis import strategies as st

from memory.ranks import counted_without
from tests.memory.fakes import CHANNEL_ORDERS, RANKED_IDS, ranked


@given(keyword=CHANNEL_ORDERS, semantic=CHANNEL_ORDERS, skipped=st.sets(st.sampled_from(RANKED_IDS)))
def test_the_others_are_ranked_as_if_the_skipped_were_not_there(
    keyword: list[str], semantic: list[str], skipped: set[str]
) -> None:
    found = ranked({"keyword": keyword, "semantic": semantic})
    without = ranked(
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
    found = ranked({"keyword": ["R1", "R2"]})
    assert counted_without(found, {"R9"}) == found
