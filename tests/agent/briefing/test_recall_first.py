"""The recall query check: a query that is only the evidence label is not a query about the alert."""

from hypothesis import given
from hypothesis import strategies as st

from agent.briefing.recall_first import REPLACED_QUERY, RecallFirst, names_the_alert
from agent.core.conversation import ModelTurn, ToolCall
from agent.core.evidence import AlertInput, Evidence
from agent.core.prompts import data_block
from agent.core.schema import ModelAnswer
from agent.core.tools import RECALL
from memory.text import tokens

LABEL_WORDS = {"alert", "untrusted", "possibly", "stale", "uncertain", "evidence", "data"}
# Content words as the recall compares them: not stopwords, not hex ids, not the label's own.
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10).filter(
    lambda w: tokens(w) == {w} and w not in LABEL_WORDS
)
SERVICES = st.sampled_from([None, "checkout-service", "payments", "auth-api"])


@given(st.lists(WORDS, min_size=1, max_size=8), SERVICES)
def test_the_label_never_names_the_alert_and_one_alert_word_does(
    words: list[str], service: str | None
) -> None:
    alert = AlertInput(text=" ".join(words), service=service)
    [item] = Evidence(alert).items
    label = data_block("DATA-x", item).splitlines()[0]
    assert names_the_alert(alert.description, alert)
    assert not names_the_alert(label, alert) or set(words) & tokens(service or "")
    assert names_the_alert(f"{label} {words[0]}", alert) or words[0] in tokens(service or "")


def test_a_label_query_is_replaced_and_a_real_one_kept() -> None:
    alert = AlertInput(
        text="checkout 500s: remaining connection slots are reserved", service="checkout-service"
    )
    rule = RecallFirst(alert)
    label = ToolCall(id="c1", name=RECALL, arguments='{"alert_description": "The alert on checkout-service"}')
    real = ToolCall(id="c2", name=RECALL, arguments='{"alert_description": "connection slots reserved"}')
    turn, notes = rule.apply(ModelTurn(content=None, tool_calls=[label, real]), first_hop=True)
    first, second = turn.tool_calls
    assert alert.description in first.arguments and notes == {"c1": REPLACED_QUERY}
    assert second == real


def test_a_planner_answer_on_a_later_hop_passes_through() -> None:
    """The evidence-only planner answers with a value while tools are still offered: the rule must
    hand that answer to the loop, or the loop reads an empty turn and asks for a repair."""
    alert = AlertInput(text="checkout 500s", service="checkout-service")
    answer = ModelAnswer(summary="The alert resembles nothing on record.")
    turn, notes = RecallFirst(alert).apply(ModelTurn(content=None, answer=answer), first_hop=False)
    assert turn.answer is answer and not turn.tool_calls and notes == {}
