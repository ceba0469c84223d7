"""The one severity order: every spelling real alerting systems send sits on the ladder, spellings of
one level tie (but syslog's three on critical), and anything else ranks below them all."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from incidents.severity import LADDER, known_spellings, level_of, outranks, rank, worst

# (what a sender writes, the ladder word it ranks with)
SENT = [
    # Opsgenie and PagerDuty priorities
    ("P1", "critical"),
    ("p2", "high"),
    ("P3", "warning"),
    ("P4", "low"),
    ("P5", "info"),
    # the incident-management habit
    ("SEV1", "critical"),
    ("sev-1", "critical"),
    ("Sev 2", "high"),
    ("SEV_3", "warning"),
    ("sev4", "low"),
    ("SEV5", "info"),
    # syslog
    ("emergency", "critical"),
    ("emerg", "critical"),
    ("alert", "critical"),
    ("crit", "critical"),
    ("err", "high"),
    ("warn", "warning"),
    ("notice", "minor"),
    ("informational", "info"),
    ("debug", "none"),
    # Zabbix
    ("Disaster", "critical"),
    ("High", "high"),
    ("Average", "warning"),
    ("Warning", "warning"),
    ("Information", "info"),
    ("Not classified", "none"),
    # PagerDuty event severities
    ("critical", "critical"),
    ("error", "high"),
    ("warning", "warning"),
    ("info", "info"),
    # Grafana and Alertmanager habits
    ("page", "critical"),
    ("ticket", "warning"),
    ("none", "none"),
]

# The first words keep their ranks, so severities stored before mean what they meant.
FIRST_WORDS = {
    "critical": 6,
    "page": 6,
    "high": 5,
    "error": 5,
    "major": 5,
    "warning": 4,
    "minor": 3,
    "low": 2,
    "info": 1,
}

SPELLINGS = [spelling for level in LADDER for spelling in level.spellings]

# syslog's names and numbers (RFC 5424), 0 the most urgent
SYSLOG = {
    "emergency": 0,
    "emerg": 0,
    "alert": 1,
    "crit": 2,
    "critical": 2,
    "err": 3,
    "error": 3,
    "warning": 4,
    "warn": 4,
    "notice": 5,
    "informational": 6,
    "info": 6,
    "debug": 7,
}
# the syslog names more urgent than the rest of the critical level
ABOVE_CRITICAL = {"emergency", "emerg", "alert"}


@pytest.mark.parametrize(("sent", "word"), SENT)
def test_a_sent_severity_ranks_with_its_ladder_word(sent: str, word: str) -> None:
    level = level_of(sent)
    assert level is not None and level.name == word
    assert rank(sent) == rank(word)


@pytest.mark.parametrize(("word", "was"), FIRST_WORDS.items())
def test_the_first_words_keep_their_ranks(word: str, was: int) -> None:
    assert rank(word) == was


@pytest.mark.parametrize(
    ("worse", "milder"),
    [
        ("P1", "P2"),
        ("P2", "P3"),
        ("P3", "P4"),
        ("P4", "P5"),
        ("SEV1", "sev-2"),
        ("sev-2", "warning"),
        ("Disaster", "High"),
        ("Average", "Information"),
        ("emergency", "err"),
        ("notice", "low"),
        ("info", "debug"),
        ("none", "P7"),
    ],
)
def test_a_worse_level_outranks_a_milder_one(worse: str, milder: str) -> None:
    assert outranks(worse, milder) and not outranks(milder, worse)


@pytest.mark.parametrize("unknown", ["P0", "P6", "SEV0", "sev-x", "loud", "unknown", "", "1"])
def test_an_unknown_severity_ranks_below_every_known_one(unknown: str) -> None:
    assert level_of(unknown) is None
    assert all(outranks(spelling, unknown) for spelling in SPELLINGS)
    assert not any(outranks(unknown, spelling) for spelling in SPELLINGS)


def test_the_worst_of_mixed_spellings_is_the_most_urgent_as_sent() -> None:
    assert worst(["warning", "P2", "sev-3", "P7"]) == "P2"
    assert worst(["P3", "warning"]) == "P3"  # the first of those ranked alike
    assert worst(["crit", "Emergency", "alert", "P1"]) == "Emergency"


def test_the_accepted_spellings_are_listed_most_urgent_first() -> None:
    listed = known_spellings()
    assert listed.index("P1") < listed.index("P2") < listed.index("not classified")
    assert all(spelling in listed for spelling in SPELLINGS)


def _variant(spelling: str, data: st.DataObject) -> str:
    """The same spelling as a sender might write it: any case, with ``-``, ``_`` or spaces inside."""
    out = []
    for char in spelling:
        out.append(data.draw(st.sampled_from([char.lower(), char.upper()])))
        out.append(data.draw(st.sampled_from(["", "", "-", "_", " "])))
    return "".join(out)


@given(st.sampled_from(SPELLINGS), st.sampled_from(SPELLINGS), st.data())
def test_outranks_follows_the_ladder_whatever_the_spelling(a: str, b: str, data: st.DataObject) -> None:
    """For any two known spellings, written as senders vary them, ``outranks`` says what their ladder
    ranks say, and two spellings of one level never outrank each other (but syslog's, below)."""
    level_a, level_b = level_of(a), level_of(b)
    assert level_a is not None and level_b is not None
    a_sent, b_sent = _variant(a, data), _variant(b, data)
    assert level_of(a_sent) == level_a
    if level_a != level_b:
        assert outranks(a_sent, b_sent) == (level_a.rank > level_b.rank)
    elif not {a, b} & ABOVE_CRITICAL:
        assert not outranks(a_sent, b_sent) and not outranks(b_sent, a_sent)


@given(st.data())
def test_syslog_names_outrank_each_other_in_syslogs_order(data: st.DataObject) -> None:
    """For every pair of syslog names, written as senders vary them: emergency > alert > critical > err
    > warning > notice > info > debug, though the first three share the critical level (its colour,
    its place in the list filter)."""
    sent = {name: _variant(name, data) for name in SYSLOG}
    for a, b in itertools.product(SYSLOG, repeat=2):
        assert outranks(sent[a], sent[b]) == (SYSLOG[a] < SYSLOG[b]), (sent[a], sent[b])


@pytest.mark.parametrize("other", ["critical", "page", "P1", "SEV1", "disaster"])
def test_syslogs_alert_and_emergency_outrank_the_rest_of_critical(other: str) -> None:
    assert outranks("alert", other) and outranks("emergency", other) and outranks("emergency", "alert")
    assert not outranks(other, "alert")
