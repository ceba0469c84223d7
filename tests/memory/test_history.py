"""An import's rejections: all counted, one page kept, whatever order the rejections arrive in."""

from hypothesis import given
from hypothesis import strategies as st

from memory.history import Rejections


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
