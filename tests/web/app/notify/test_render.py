"""One rendering for every channel: the short briefing, Block Kit that Slack accepts, Markdown, JSON."""

import json
import re

import pytest
from apprise.conversion.format import markdown_to_html
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from tests.web.app.notify.test_slack import BRIEFING
from web.app.notify.render import (
    Notice,
    compose,
    markdown,
    neutral,
    plain_text,
    short_briefing,
    slack_blocks,
    slack_text,
    webhook_body,
)

INCIDENT = {
    "public_id": "INC-0007",
    "service": "checkout-service",
    "severity": "critical",
    "status": "triggered",
    "title": "Checkout <p99> & latency",
}


def notice(event: str = "briefing_stored", **payload: object) -> Notice:
    return compose(
        event=event,
        incident=INCIDENT,
        payload=dict(payload),
        briefing=BRIEFING,
        link="https://r.example.org/incidents/INC-0007",
    )


def test_citations_become_the_incident_they_cite_and_other_numbers_go() -> None:
    short = short_briefing(BRIEFING)
    assert [c.text for c in short.checks] == [
        "Check pg_stat_activity for idle-in-transaction sessions [INC-2023-0142]"
    ]
    assert [r.text for r in short.risky] == ["Do not restart the primary database"]
    assert short.related == ["INC-2023-0142"]


def test_slack_blocks_are_valid_block_kit_and_escape_alert_text() -> None:
    blocks = [block.to_dict() for block in slack_blocks(notice())]
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None
        parsed.validate_json()
    assert blocks[0]["type"] == "header" and "INC-0007" in blocks[0]["text"]["text"]
    context = blocks[-1]["elements"][0]["text"]
    assert "<https://r.example.org/incidents/INC-0007|Open INC-0007>" in context
    long_title = compose(
        event="briefing_stored",
        incident={**INCIDENT, "title": "x" * 400},
        payload={},
        briefing=None,
        link=None,
    )
    assert len(slack_blocks(long_title)[0].to_dict()["text"]["text"]) <= 150


def test_markdown_and_the_webhook_say_the_same_thing() -> None:
    text = markdown(notice())
    assert (
        "**First checks**" in text and "Open the incident: https://r.example.org/incidents/INC-0007" in text
    )
    body = webhook_body(notice(), delivery_id=3)
    assert (
        body["delivery_id"] == 3 and body["text"] == text and body["briefing"]["related"] == ["INC-2023-0142"]
    )


@pytest.mark.parametrize("extensions", [None, ()])  # as Apprise renders it, and as a passthrough body
def test_each_line_of_a_section_is_an_item_of_a_list_in_matrix_and_email(
    extensions: tuple[str] | None,
) -> None:
    stored = compose(
        event="briefing_stored",
        incident=INCIDENT,
        payload={},
        briefing={**BRIEFING, "first_checks": [{"text": "Check the pool"}, {"text": "Check the locks"}]},
        link=None,
    )
    html = markdown_to_html(markdown(stored), extensions=extensions)
    assert "<li>Check the pool</li>" in html and "<li>Check the locks</li>" in html


def test_lifecycle_events_are_one_line_with_who_and_what() -> None:
    acked = notice("incident_acknowledged", actor="dana")
    assert acked.headline.startswith("Acknowledged by dana") and acked.briefing is None
    resolved = notice("incident_resolved", actor="lee", root_cause="pool too small [1]", grade=65)
    assert resolved.lines == ["Root cause: pool too small", "Briefing grade: 65"]


def test_a_briefing_with_a_head_is_delivered_as_its_head() -> None:
    head = {
        "first_line": "Happened before on this service: INC-2023-0142 on 2023-05-02 [1].",
        "checks": [{"text": "Check pg_stat_activity for idle sessions", "citations": [1]}],
        "fixes": [
            {"text": "Raise the pool to 60", "citations": [1, 2], "role": "fix", "field": "resolution_step"}
        ],
        "risky": [{"text": "Scale the pods", "citations": [9]}],
        "more_checks": [{"text": "Look at the dashboard", "citations": [1]}],
        "recurrence": "This pattern recurs about every 90 days.",
    }
    short = short_briefing({**BRIEFING, "head": head})
    assert short.summary.startswith("Happened before on this service: INC-2023-0142")
    assert short.summary.endswith("recurs about every 90 days.")
    assert [c.text for c in short.checks] == ["Check pg_stat_activity for idle sessions [INC-2023-0142]"]
    assert [r.text for r in short.risky] == ["Scale the pods"]
    text = markdown(
        compose(
            event="briefing_stored",
            incident=INCIDENT,
            payload={},
            briefing={**BRIEFING, "head": head},
            link=None,
        )
    )
    assert "Look at the dashboard" not in text


def test_every_channel_says_the_role_and_field_a_line_rests_on() -> None:
    head = {
        "first_line": "Happened before on this service: INC-2023-0142 [1].",
        "fixes": [
            {"text": "Raise the pool to 60", "citations": [1], "role": "fix", "field": "resolution_step"}
        ],
    }
    short = short_briefing({**BRIEFING, "head": head})
    assert (short.fixes[0].role, short.fixes[0].field) == ("fix", "resolution_step")
    stored = compose(
        event="briefing_stored",
        incident=INCIDENT,
        payload={},
        briefing={**BRIEFING, "head": head},
        link=None,
    )
    line = "Raise the pool to 60 [INC-2023-0142] (resolution step)"
    assert f"- {line}" in markdown(stored)
    assert any(line in json.dumps(block.to_dict()) for block in slack_blocks(stored))
    fix = webhook_body(stored, delivery_id=1)["briefing"]["fixes"][0]
    assert (fix["role"], fix["field"]) == ("fix", "resolution_step")


HOSTILE = (
    "<!channel> <!here> <@U024BE7LH> @room @everyone @here [log in](https://evil.example/x) http://evil.example"
    ' <a href="//evil.example/y">log in</a> //evil.example/z'
)
# A mention, a link after its scheme or a scheme-relative one (``[:]//`` is defanged), Markdown's link.
ACTIVE = re.compile(r"<[!@#]|(?i:@(?:channel|here|everyone|room)\b)|://|(?<!\])//|\]\(")


def hostile_notice() -> Notice:
    """Every alert-supplied text carries mentions and links: title, service, the briefing's lines."""
    briefing = {
        **BRIEFING,
        "summary": HOSTILE,
        "first_checks": [{"text": HOSTILE}],
        "related_incidents": [{"id": HOSTILE}],
    }
    return compose(
        event="briefing_stored",
        incident={**INCIDENT, "title": HOSTILE, "service": HOSTILE},
        payload={},
        briefing=briefing,
        link="https://r.example.org/incidents/INC-0007",
    )


def test_slack_text_and_blocks_carry_no_mention_and_no_live_link_from_the_alert() -> None:
    text = plain_text(hostile_notice())  # the top-level text Slack notifies with
    blocks = json.dumps([block.to_dict() for block in slack_blocks(hostile_notice())])
    assert ACTIVE.search(text) is None
    assert ACTIVE.search(blocks.replace("<https://r.example.org/incidents/INC-0007|", "")) is None
    assert "evil[.]example" in blocks and "https://r.example.org/incidents/INC-0007" in blocks


def test_apprise_title_and_body_carry_no_mention_and_no_live_link_from_the_alert() -> None:
    title, body = plain_text(hostile_notice()), markdown(hostile_notice())
    assert ACTIVE.search(title) is None
    assert ACTIVE.search(body.replace("Open the incident: https://r.example.org", "")) is None
    assert "room" in title and "Open the incident: https://r.example.org/incidents/INC-0007" in body


def test_html_in_alert_text_reaches_matrix_and_email_as_text_not_markup() -> None:
    body = markdown(hostile_notice())  # Apprise turns it into HTML for Matrix and email
    assert "<" not in body and ">" not in body
    assert '&lt;a href="/\u2060/evil[.]example/y"&gt;log in&lt;/a&gt;' in body
    resolved = notice(event="incident_resolved", root_cause="pool < 60 & queue > 5")
    assert "Root cause: pool &lt; 60 &amp; queue &gt; 5" in markdown(resolved)


def test_slack_top_level_text_escapes_what_mrkdwn_reads() -> None:
    assert "Checkout &lt;p99&gt; &amp; latency" in slack_text(notice())
    assert ACTIVE.search(slack_text(hostile_notice())) is None


def test_the_webhook_fields_carry_no_mention_and_no_live_link_from_the_alert() -> None:
    body = webhook_body(hostile_notice(), delivery_id=1)
    raw = json.dumps({k: v for k, v in body.items() if k != "link"})
    assert ACTIVE.search(raw.replace("Open the incident: https://r.example.org", "")) is None
    assert body["link"] == "https://r.example.org/incidents/INC-0007"


@given(st.text())
def test_neutral_text_has_nothing_a_chat_acts_on_and_reads_the_same(text: str) -> None:
    safe = neutral(text)
    assert ACTIVE.search(safe) is None
    assert safe.replace("\u2060", "").replace("[:]", ":").replace("[.]", ".") == text.replace(
        "[:]", ":"
    ).replace("[.]", ".")
