"""Rules every extraction keeps, whatever the text: spans lie in it, values come from spans only."""

from itertools import pairwise

from hypothesis import assume, given
from hypothesis import strategies as st

from memory.extraction.document import from_text
from memory.extraction.extract import extract
from memory.extraction.headings import field_of
from memory.extraction.model import Span, joined
from memory.extraction.prose import CHAT_PREFIX, sentences
from memory.template import FIELDS

_KIND = {f.name: f.kind for f in FIELDS}
_PIECES = st.sampled_from(
    [
        "# Incident review\n",
        "## Root cause\n",
        "ROOT CAUSE\n",
        "**Resolution**\n",
        "Impact:\n",
        "Mitigation: rolled back the deploy\n",
        "Resolution kind: self recovered\n",
        "Date: 2023-11-02\n",
        "Service: search\n",
        "| Jan 3, 2020 | 10:00 |\n",
        "The root cause was a bad certificate rotation.\n",
        "Customers experienced elevated 5xx errors.\n",
        "\n",
        "---\n",
        "   \n",
    ]
)
TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=40)), max_size=25).map("".join)


@given(TEXTS)
def test_spans_lie_in_the_text_and_values_are_built_from_them(text: str) -> None:
    extraction = extract(from_text("any.txt", text))
    for name, field in extraction.fields.items():
        assert all(0 <= s.start < s.end <= len(text) for s in field.spans), name
        assert list(field.spans) == sorted(field.spans)
        assert bool(field.value) == bool(field.spans), name
        if _KIND[name] == "text":
            assert field.value == joined(text, field.spans), name
        else:
            for span in field.spans:
                assert text[span.start : span.end].strip(), name
    for extra in (extraction.service, extraction.title):
        assert extra.value == joined(text, extra.spans)
    assert extraction.missing == tuple(n for n in extraction.missing if not extraction[n].value)
    assert 0.0 <= extraction.fill_rate <= 1.0


@given(TEXTS)
def test_every_word_of_a_text_field_is_in_its_spans_bold_markers_aside(text: str) -> None:
    extraction = extract(from_text("any.txt", text))
    for name, field in extraction.fields.items():
        if _KIND[name] != "text":
            continue
        source = " ".join(text[s.start : s.end] for s in field.spans).replace("**", "").replace("__", "")
        for word in field.value.split():
            assert word in source, (name, word)


_CHAT = st.sampled_from(["[14:02] maria: ", "jonas 11:02  ", "\n", ", so ", ", so that "])


@given(
    st.lists(
        st.one_of(_PIECES, _CHAT, st.text(max_size=40), st.sampled_from(["e.g. ", "1. ", "a.m. ", ". "])),
        max_size=20,
    ).map("".join)
)
def test_sentences_cover_every_word_of_a_paragraph_once_in_order(text: str) -> None:
    """Every word but a chat message's time and speaker, which are no words of the message."""
    found = list(sentences(text, Span(0, len(text))))
    assert all(0 <= s.start < s.end <= len(text) for s in found)
    assert all(a.end <= b.start for a, b in pairwise(found))
    covered = {i for s in found for i in range(s.start, s.end)}
    prefixes = {i for m in CHAT_PREFIX.finditer(text) for i in range(m.start(), m.end())}
    assert all(i in covered or i in prefixes for i, c in enumerate(text) if not c.isspace())


@given(st.lists(st.sampled_from(["[09:1%d] ana: ", "tom 10:0%d "]), min_size=2, max_size=6), st.data())
def test_a_chat_paste_gives_each_message_without_its_time_and_speaker(
    prefixes: list[str], data: st.DataObject
) -> None:
    messages = [
        data.draw(st.sampled_from(["db is down", "rolled it back", "what changed?", "ok"])) for _ in prefixes
    ]
    text = "".join(f"{p % (i % 10)}{m}\n" for i, (p, m) in enumerate(zip(prefixes, messages, strict=True)))
    found = [text[s.start : s.end] for s in sentences(text, Span(0, len(text)))]
    assert found == messages


@given(st.lists(st.sampled_from(["the", "pool", "ran", "dry", "disk", "filled"]), min_size=1, max_size=6))
def test_a_consequence_after_a_comma_is_a_sentence_of_its_own_but_a_purpose_is_not(said: list[str]) -> None:
    clause = " ".join(said)
    text = f"The cache expired, so {clause}."
    assert [text[s.start : s.end] for s in sentences(text, Span(0, len(text)))] == [
        "The cache expired,",
        f"so {clause}.",
    ]
    purpose = f"We drained the node, so that {clause}."
    assert len(list(sentences(purpose, Span(0, len(purpose))))) == 1


_ITEM_LABELS = st.sampled_from(["cause", "fix", "symptom", "todo", "error", "seen by", "note", "owner"])
_ITEM_WORDS = st.sampled_from(["disk", "pool", "the", "was", "full", "rolled", "node", "x9"])
_ITEM_TEXT = st.lists(_ITEM_WORDS, min_size=1)


@given(st.lists(st.tuples(_ITEM_LABELS, _ITEM_TEXT.map(" ".join)), min_size=1, max_size=6))
def test_a_labelled_list_gives_each_field_its_own_items_only(items: list[tuple[str, str]]) -> None:
    items = [(label, f"{words} n{i}") for i, (label, words) in enumerate(items)]  # no item repeats another
    text = "".join(f"- {label}: {words}\n" for label, words in items)
    extraction = extract(from_text("note.md", text))
    for name, field in extraction.fields.items():
        own = [words for label, words in items if field_of(label) == name]
        if _KIND[name] == "text" and own:
            assert field.value.splitlines() == own, name
        for span in field.spans:
            assert "\n" not in text[span.start : span.end].strip(), name


_MESSAGE = st.text(st.characters(categories=["L", "N"], include_characters=" :/-"), min_size=2, max_size=60)


@given(
    _MESSAGE.filter(lambda m: m.strip() == m and any(c.isalnum() for c in m)),
    st.sampled_from(["log says", "logs were full of", "requests failed with"]),
)
def test_a_message_in_backticks_after_what_said_it_is_the_signature_whole(message: str, said: str) -> None:
    text = f"Checkout went down for everyone.\n\nThe {said} `{message}` all night.\n"
    assert extract(from_text("note.txt", text))["error_signature"].value == message


_PART = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=2, max_size=8)  # service names are ASCII


@given(st.lists(_PART, min_size=1, max_size=3), st.sampled_from(["-", " ", "_"]), st.booleans())
def test_a_known_service_is_found_however_its_parts_are_joined_and_never_inside_another_name(
    parts: list[str], joiner: str, longer: bool
) -> None:
    text = "bad night\n\nthe pods of {} kept restarting.\n"
    assume(not any(part in text for part in parts))  # the service is named once, where it is put
    service = "-".join(parts)
    spoken = joiner.join(parts).upper()
    said = f"{spoken}-gateway" if longer else spoken
    text = text.format(said)
    found = extract(from_text("note.txt", text), [service]).service
    assert found.value == ("" if longer else service)


@given(
    st.sampled_from(["The queue", "Checkout", "It", "Latency", "The cluster"]),
    st.sampled_from(["was back to normal", "recovered", "caught up", "drained", "cleared"]),
    st.sampled_from(["", "We will add an alert on queue age."]),
)
def test_a_sentence_saying_it_came_back_is_the_outcome_unless_follow_ups_are(
    subject: str, back: str, follow_up: str
) -> None:
    sentence = f"{subject} {back} by 10:25."
    text = f"Orders failed all night.\n\nWe restarted the workers. {sentence} {follow_up}\n"
    assert extract(from_text("note.txt", text))["outcome"].value == (follow_up or sentence)
