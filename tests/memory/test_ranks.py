"""Channel ranks counted without some records (the ranks a search would give had they not been there),
and two searches' ranks taken together."""

from hypothesis import given
from hypothesis import strategies as st

from memory.ranks import best_of, counted_without
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


@given(
    first=st.fixed_dictionaries({"keyword": CHANNEL_ORDERS, "semantic": CHANNEL_ORDERS}),
    second=st.fixed_dictionaries({"keyword": CHANNEL_ORDERS, "semantic": CHANNEL_ORDERS}),
)
def test_two_searches_give_one_ranking_by_each_records_better_rank(
    first: dict[str, list[str]], second: dict[str, list[str]]
) -> None:
    """A search across services run again without the services' names: each record once, and each
    channel still a ranking (1, 2, 3...), a record ahead of another when its better rank of the two
    searches is better, the first search deciding a tie; so a record the second search raises can go up,
    and two records never both read as first."""
    a, b = ranked(first), ranked(second)
    got = best_of(a, b)
    assert sorted(i.id for i in got) == sorted({i.id for i in [*a, *b]})
    for channel in ("keyword", "semantic"):
        ranks = {i.id: i.why[channel] for i in got if channel in i.why}
        assert sorted(ranks.values()) == list(range(1, len(ranks) + 1))
        best = {i: min(r.why[channel] for r in [*a, *b] if r.id == i and channel in r.why) for i in ranks}
        for x in ranks:
            for y in ranks:
                if best[x] < best[y]:
                    assert ranks[x] < ranks[y]


def test_a_record_the_second_search_puts_first_comes_second_to_the_first_searchs_first() -> None:
    first = ranked({"keyword": ["R1", "R2", "R3"]})
    second = ranked({"keyword": ["R3", "R1"]})
    assert {i.id: i.why["keyword"] for i in best_of(first, second)} == {"R1": 1, "R3": 2, "R2": 3}
