"""The one rendering of a notice: an event about an incident, with its short briefing and a link.

``short_briefing`` picks what a chat message carries from a stored briefing: its head (the first line,
the ranked checks, fixes and risky moves, each with its role and the field it rests on) and the related
incidents. ``compose`` turns an event into a
``Notice``; the formatters write that notice as Slack Block Kit, as Markdown (Apprise: Matrix, email,
Teams, ...) and as the generic webhook's JSON. Every channel says the same thing because they all
start here. Citations ``[n]`` become the id of the incident they cite (``[INC-0042]``), since a chat
reader has no evidence list to look them up in.

Alert text is written by whoever holds an alert token, and chats act on some text: ``<!channel>``,
``@room`` or a link in a title would page a workspace or dress up a phishing link. Every formatter
starts from ``chat_safe(notice)``, which passes each text the notice carries (but not RecallOps' own
link) through ``neutral``, so whatever the notice comes to hold is covered. Then each format escapes
what its own markup reads: ``&``, ``<`` and ``>`` in Slack's mrkdwn (the top-level text too) and in
the Markdown Apprise turns into HTML for Matrix and email.
"""

import re
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from agent.core.schema import field_words
from incidents.delivery.routing import (
    BRIEFING_STORED,
    BRIEFING_UPDATED,
    INCIDENT_ACKNOWLEDGED,
    INCIDENT_RESOLVED,
)

MAX_CHECKS = 3
MAX_FIXES = 3
MAX_RISKY = 2
MAX_RELATED = 3
MAX_ITEM_CHARS = 300
_CITATION = re.compile(r"\s*\[(\d+)\]")
_SLACK_SECTION_CHARS = 2900
_SLACK_HEADER_CHARS = 150
_JOINER = "\u2060"  # invisible: splits a token so no chat parses it, and the reader sees the same text
_CONTROL = re.compile(r"<(?=[!@#])")  # Slack's <!channel>, <@U…>, <#C…>; Discord's <@…>
_MENTION = re.compile(r"(?i)@(?=(?:channel|here|everyone|room|all|group)\b)")
# A link's ``//`` with the host after it: after a scheme (``https://``) or alone (``//host``, which a
# browser or an HTML message resolves against its own scheme).
_URL = re.compile(r"(:?)(//+)([^\s/?#<>|\"'()\[\]]*)")


@dataclass(frozen=True)
class ShortItem:
    """One line of a message: its text (citations as incident ids), and the role it plays and the
    field of the record it rests on, as the briefing's claims carry them."""

    text: str
    role: str | None = None
    field: str | None = None

    def line(self) -> str:
        """The text, followed by the field it rests on when there is one ("... (resolution step)")."""
        said = field_words(self.field)
        return f"{self.text} ({said})" if said else self.text


@dataclass(frozen=True)
class ShortBriefing:
    summary: str
    checks: list[ShortItem] = field(default_factory=list)
    fixes: list[ShortItem] = field(default_factory=list)
    risky: list[ShortItem] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    seen_before: str = "novel"
    mode: str = "evidence-only"

    def sections(self) -> list[tuple[str, list[ShortItem]]]:
        found = [("First checks", self.checks), ("Suggested fix", self.fixes), ("Risky moves", self.risky)]
        return [(title, items) for title, items in found if items]


@dataclass(frozen=True)
class Notice:
    """What one message says, before any channel's formatting."""

    event: str
    incident_id: str
    service: str
    severity: str
    status: str
    title: str
    headline: str
    lines: list[str] = field(default_factory=list)
    briefing: ShortBriefing | None = None
    link: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cited(text: str, evidence: list[dict[str, Any]]) -> str:
    by_n = {item.get("n"): item for item in evidence}

    def swap(match: re.Match[str]) -> str:
        item = by_n.get(int(match.group(1)))
        if item and item.get("kind") == "incident" and item.get("id"):
            return f" [{item['id']}]"
        return ""

    cleaned = _CITATION.sub(swap, text).strip()
    return cleaned if len(cleaned) <= MAX_ITEM_CHARS else cleaned[: MAX_ITEM_CHARS - 1] + "…"


def _short_items(items: list[dict[str, Any]], evidence: list[dict[str, Any]]) -> list[ShortItem]:
    """Head items or claims, their citations written as the incident ids they point to."""
    return [
        ShortItem(
            text=_cited(
                str(item.get("text", "")) + "".join(f" [{n}]" for n in item.get("citations") or []), evidence
            ),
            role=item.get("role"),
            field=item.get("field"),
        )
        for item in items
    ]


def short_briefing(data: dict[str, Any]) -> ShortBriefing:
    """What a message carries: the briefing's head (``agent.briefing.head``), the one structure the page
    and the API show too. Briefings stored before heads existed fall back to the top of their full lists."""
    evidence = list(data.get("evidence") or [])
    head = data.get("head")

    def items(key: str, limit: int) -> list[ShortItem]:
        return _short_items([{**i, "citations": []} for i in (data.get(key) or [])[:limit]], evidence)

    if head:
        summary = _cited(str(head.get("first_line", "")), evidence)
        if head.get("recurrence"):
            summary += " " + str(head["recurrence"])
        checks = _short_items(head.get("checks") or [], evidence)
        fixes = _short_items(head.get("fixes") or [], evidence)
        risky = _short_items(head.get("risky") or [], evidence)
    else:
        summary = _cited(str(data.get("summary", "")), evidence)
        checks = items("first_checks", MAX_CHECKS)
        fixes = items("suggested_fix", MAX_FIXES)
        risky = items("risky_actions", MAX_RISKY)
    return ShortBriefing(
        summary=summary,
        checks=checks,
        fixes=fixes,
        risky=risky,
        related=[str(r.get("id")) for r in (data.get("related_incidents") or [])[:MAX_RELATED]],
        seen_before=str(data.get("seen_before", "novel")),
        mode=str(data.get("mode", "evidence-only")),
    )


def compose(
    *,
    event: str,
    incident: dict[str, str],
    payload: dict[str, Any],
    briefing: dict[str, Any] | None,
    link: str | None,
) -> Notice:
    """The notice for one event. ``incident`` carries public_id, service, severity, status, title."""
    head = f"{incident['public_id']} · {incident['service']} · {incident['severity']}"
    lines: list[str] = []
    short = short_briefing(briefing) if briefing else None
    if event == BRIEFING_STORED:
        headline = f"{head}: {incident['title']}"
        lines.append(f"Seen before: {short.seen_before}" if short else "No briefing yet.")
    elif event == BRIEFING_UPDATED:
        headline = f"Briefing updated (v{payload.get('version', '?')}) · {head}"
    elif event == INCIDENT_ACKNOWLEDGED:
        headline = f"Acknowledged by {payload.get('actor', 'someone')} · {head}"
        short = None
    elif event == INCIDENT_RESOLVED:
        headline = f"Resolved by {payload.get('actor', 'someone')} · {head}"
        if payload.get("root_cause"):
            lines.append(f"Root cause: {_cited(str(payload['root_cause']), [])}")
        if payload.get("grade") is not None:
            lines.append(f"Briefing grade: {payload['grade']}")
        short = None
    else:
        headline = f"Test message from RecallOps to channel {payload.get('channel', '')}"
        lines.append("If you can read this, the channel is configured.")
    return Notice(
        event=event,
        incident_id=incident.get("public_id", ""),
        service=incident.get("service", ""),
        severity=incident.get("severity", ""),
        status=incident.get("status", ""),
        title=incident.get("title", ""),
        headline=headline,
        lines=lines,
        briefing=short,
        link=link,
    )


def neutral(text: str) -> str:
    """Text shown as written but acted on by no chat: mention tokens and keywords are split by an
    invisible joiner, links are defanged (``https[:]//host[.]example``; a scheme-relative ``//host``
    gets a joiner between its slashes), Markdown links broken."""
    text = _CONTROL.sub("<" + _JOINER, text)
    text = _MENTION.sub("@" + _JOINER, text)
    text = _URL.sub(_defanged, text)
    return text.replace("](", "]" + _JOINER + "(")


def _defanged(link: re.Match[str]) -> str:
    colon, slashes, host = link.groups()
    lead = "[:]" + slashes if colon else _JOINER.join("/" * len(slashes))
    return lead + host.replace(".", "[.]")


def _neutral_all(value: Any) -> Any:
    if isinstance(value, str):
        return neutral(value)
    if isinstance(value, list):
        return [_neutral_all(item) for item in value]
    if isinstance(value, dict):
        return {key: _neutral_all(item) for key, item in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _neutral_all(getattr(value, f.name)) for f in fields(value)})
    return value


def chat_safe(notice: Notice) -> Notice:
    """The notice with every text in it through ``neutral``, except RecallOps' own link."""
    safe: Notice = _neutral_all(notice)
    return replace(safe, link=notice.link)


def plain_text(notice: Notice) -> str:
    """One line: Slack's notification fallback and every message's first line."""
    return chat_safe(notice).headline


def markdown(notice: Notice) -> str:
    """The body for Apprise channels (Matrix, email, Teams, Discord, ...): Markdown, short."""
    notice = chat_safe(notice)
    parts: list[str] = [*notice.lines]
    if notice.briefing is not None:
        if notice.briefing.summary:
            parts.append(notice.briefing.summary)
        for title, items in notice.briefing.sections():
            # The blank line makes a list of the items: without it Markdown reads them as the
            # heading's paragraph, and Matrix and email show them run together.
            parts.append(f"**{title}**\n\n" + "\n".join(f"- {item.line()}" for item in items))
        if notice.briefing.related:
            parts.append("Related: " + ", ".join(notice.briefing.related))
    body = "\n\n".join(_escaped(part) for part in parts if part)
    return f"{body}\n\nOpen the incident: {notice.link}" if notice.link else body


def slack_text(notice: Notice) -> str:
    """Slack's top-level text (the notification and the fallback), which Slack reads as mrkdwn."""
    return _escaped(plain_text(notice))


def _escaped(text: str) -> str:
    """&, < and > as entities: Slack's mrkdwn reads them as markup, and so does the HTML that Markdown
    becomes in Matrix and email, where alert text quoting ``<a href=...>`` would be a live link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(text: str) -> SectionBlock:
    clipped = text if len(text) <= _SLACK_SECTION_CHARS else text[: _SLACK_SECTION_CHARS - 1] + "…"
    return SectionBlock(text=MarkdownTextObject(text=clipped))


def slack_blocks(notice: Notice) -> list[Block]:
    """Block Kit: a header, the briefing's sections, related incidents and the link as context."""
    notice = chat_safe(notice)
    header = notice.headline
    if len(header) > _SLACK_HEADER_CHARS:
        header = header[: _SLACK_HEADER_CHARS - 1] + "…"
    blocks: list[Block] = [HeaderBlock(text=header)]
    for line in notice.lines:
        blocks.append(_section(_escaped(line)))
    if notice.briefing is not None:
        if notice.briefing.summary:
            blocks.append(_section(_escaped(notice.briefing.summary)))
        for title, items in notice.briefing.sections():
            body = "\n".join(f"• {_escaped(item.line())}" for item in items)
            blocks.append(_section(f"*{title}*\n{body}"))
    context: list[str] = []
    if notice.briefing is not None and notice.briefing.related:
        context.append("Related: " + ", ".join(_escaped(r) for r in notice.briefing.related))
    if notice.link:
        context.append(f"<{notice.link}|Open {notice.incident_id or 'RecallOps'}>")
    if context:
        blocks.append(DividerBlock())
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=" · ".join(context))]))
    return blocks


def webhook_body(notice: Notice, *, delivery_id: int) -> dict[str, Any]:
    """The generic webhook's JSON: the notice's fields, the Markdown rendering and the delivery id.
    Receivers often post these fields to a chat, so they are neutralised like every other channel's."""
    return {"delivery_id": delivery_id, **chat_safe(notice).as_dict(), "text": markdown(notice)}
