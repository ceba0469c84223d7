"""The citation check: every bracket variant normalized, every out-of-range number removed and counted."""

import re

from hypothesis import example, given
from hypothesis import strategies as st

from agent.core.citations import Tally, check_items, check_text, parse_marker
from agent.core.schema import Claim

FULLWIDTH = str.maketrans("0123456789[]", "０１２３４５６７８９［］")
CANONICAL = re.compile(r"\[(\d+)\]")
NON_ASCII_MARKER = re.compile(r"[［【〔〖⟦]\s*[0-9０-９]")


def test_examples() -> None:
    assert check_text("pool 【1】 and ［２］", 3) == ("pool [1] and [2]", [1, 2])
    assert check_text("see [1, 3]", 3) == ("see [1][3]", [1, 3])
    assert check_text("see [1-3]", 3) == ("see [1][2][3]", [1, 2, 3])
    assert check_text("see [2–4]", 3) == ("see [2][3]", [2, 3])
    assert check_text("only [9] here", 3) == ("only here", [])
    assert check_text("links [text](http://x) and [a1] stay", 3) == (
        "links [text](http://x) and [a1] stay",
        [],
    )


def test_reversed_and_huge_ranges_are_invalid() -> None:
    tally = Tally()
    assert check_text("a [3-1] b [1-1000]", 5, tally) == ("a b", [])
    assert tally.removed == 2 and tally.cited == 0
    assert parse_marker("1, 2-3") == [1, 2, 3]


numbers = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=4)
chunks = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_characters="[]［］【】〔〕〖〗⟦⟧"), max_size=12),
        numbers.map(lambda ns: "[" + ", ".join(map(str, ns)) + "]"),
        numbers.map(lambda ns: "【" + ",".join(map(str, ns)) + "】"),
        st.tuples(st.integers(1, 12), st.integers(0, 6)).map(lambda p: f"[{p[0]}-{p[0] + p[1]}]"),
    ),
    max_size=8,
)


@given(chunks.map("".join), st.integers(min_value=0, max_value=15))
def test_every_remaining_citation_is_in_range_and_counts_add_up(text: str, count: int) -> None:
    tally = Tally()
    checked, found = check_text(text, count, tally)
    remaining = [int(n) for n in CANONICAL.findall(checked)]
    assert all(1 <= n <= count for n in remaining)
    assert not NON_ASCII_MARKER.search(checked)
    assert set(found) == set(remaining)
    markers = [parse_marker(body) for body in re.findall(r"[\[【]([0-9,\s-]+)[\]】]", text)]
    assert tally.cited == sum(len({n for n in ns if 1 <= n <= count}) for ns in markers)
    assert tally.removed == sum(1 for ns in markers for n in ns if not 1 <= n <= count)


@given(chunks.map("".join), st.integers(min_value=0, max_value=15))
@example("0\r\r[0][1-1]", 1)  # a removed marker took the space before the next one, then "\r" became " "
def test_the_check_is_idempotent(text: str, count: int) -> None:
    once, found = check_text(text, count)
    tally = Tally()
    twice, again = check_text(once, count, tally)
    assert twice == once and again == found and tally.removed == 0


@given(chunks.map("".join), st.integers(min_value=0, max_value=15))
def test_fullwidth_variants_check_like_ascii(text: str, count: int) -> None:
    assert check_text(text.translate(FULLWIDTH), count)[1] == check_text(text, count)[1]


@given(st.lists(st.integers(min_value=-3, max_value=20), max_size=6), st.integers(min_value=0, max_value=10))
def test_listed_citations_are_filtered_too(listed: list[int], count: int) -> None:
    tally = Tally()
    [item] = check_items([Claim(text="claim", citations=listed)], count, tally)
    assert all(1 <= n <= count for n in item.citations)
    assert len(item.citations) == len(set(item.citations))
    assert tally.removed == sum(1 for n in listed if not 1 <= n <= count)
