"""Reading the profile back and matching it to an alert; the correction record's labeled form."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from memory.bank import MentalModel
from memory.corrections import CorrectionRecord, format_correction, parse_correction
from memory.patterns import OfflineSynthesizer
from memory.profile import (
    PROFILE_NAME,
    Pattern,
    PatternItem,
    load_patterns,
    matching_patterns,
    parse_patterns,
    pattern_evidence_text,
    render_profile,
    service_model_id,
)
from tests.memory.profile_records import HISTORY

PATTERNS = OfflineSynthesizer().patterns(HISTORY)


def model(content: str, structured: dict | None = None) -> MentalModel:
    return MentalModel("team-reliability-profile", PROFILE_NAME, "q", [], content, structured, None)


texts = st.text(min_size=1, max_size=40).filter(str.strip)
items = st.lists(
    st.builds(PatternItem, text=texts, citations=st.lists(st.from_regex(r"INC-\d{4}", fullmatch=True)))
)
patterns = st.builds(
    Pattern,
    id=st.from_regex(r"pattern-[a-z0-9]{1,8}", fullmatch=True),
    title=texts,
    incidents=st.lists(st.from_regex(r"INC-\d{4}", fullmatch=True), min_size=1, max_size=5),
    uncertain=st.booleans(),
    severity=st.sampled_from(["", "critical", "warning"]),
    last_seen=st.none() | st.datetimes(timezones=st.just(UTC)),
    services=items,
    risky_actions=items,
    first_checks=items,
)


@given(patterns)
def test_a_pattern_survives_the_structured_form(pattern: Pattern) -> None:
    assert Pattern.from_dict(pattern.to_dict()) == pattern


def test_patterns_load_from_structured_from_json_in_text_or_not_at_all() -> None:
    structured = {"patterns": [p.to_dict() for p in PATTERNS]}
    assert load_patterns(model("text", structured)) == PATTERNS
    llm_text = (
        'Here is the profile:\n```json\n{"patterns": [{"title": "Pool exhaustion", "incidents": ["INC-1"], '
        '"risky_actions": ["Adding pods"]}]}\n```'
    )
    [parsed] = load_patterns(model(llm_text))
    assert parsed.title == "Pool exhaustion" and parsed.uncertain
    assert parsed.risky_actions == [PatternItem(text="Adding pods")]
    assert load_patterns(model("mock response")) == [] and parse_patterns("{not json") == []
    assert load_patterns(None) == []


def test_an_alert_matches_the_pattern_of_what_failed_not_of_where() -> None:
    [best, *_] = matching_patterns(
        PATTERNS,
        alert_text="HikariPool connection is not available; requests time out",
        service="billing-service",
    )
    assert best.pattern.incidents == ["INC-0001", "INC-0003"]
    assert "hikaripool-1" in best.matched_terms or "connection" in best.matched_terms
    assert matching_patterns(PATTERNS, alert_text="the weather is lovely today") == []
    assert matching_patterns([], alert_text="anything") == []


def test_the_service_breaks_ties_between_equally_similar_patterns() -> None:
    matches = matching_patterns(
        PATTERNS, alert_text="rate limited 429", service="notification-service", limit=1
    )
    assert matches[0].pattern.incidents == ["INC-0002", "INC-0006"]


def test_rendered_profile_and_evidence_keep_citations_and_labels() -> None:
    text = render_profile(PATTERNS)
    assert text.startswith(PROFILE_NAME) and "uncertain: seen once" in text
    evidence = pattern_evidence_text(PATTERNS[0])
    assert evidence.splitlines()[1].startswith("Risky actions to avoid:")
    assert "[INC-0001]" in evidence
    assert render_profile([]).endswith("no failure pattern is known.")
    assert service_model_id("checkout service/eu") == "team-reliability-profile--checkout-service-eu"


records = st.builds(
    CorrectionRecord,
    document_id=st.from_regex(r"INC-\d{4}-correction-\d{1,3}", fullmatch=True),
    corrects=st.from_regex(r"INC-\d{4}", fullmatch=True),
    service=st.from_regex(r"[a-z][a-z-]{0,20}", fullmatch=True),
    timestamp=st.datetimes(timezones=st.just(UTC)),
    text=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), min_size=1),
    author=st.from_regex(r"[a-z]{1,12}", fullmatch=True),
)


@given(records)
def test_a_correction_survives_its_labeled_form(record: CorrectionRecord) -> None:
    assert parse_correction(format_correction(record)) == record


def test_a_correction_reads_as_labeled_text() -> None:
    record = CorrectionRecord(
        "INC-0042-correction-1",
        "INC-0042",
        "checkout-service",
        datetime(2026, 3, 15, tzinfo=UTC),
        "idle sessions",
        "dana",
    )
    assert format_correction(record).splitlines() == [
        "CORRECTION INC-0042-correction-1 — checkout-service",
        "Corrects: INC-0042",
        "Timestamp: 2026-03-15T00:00:00+00:00",
        "Correction: idle sessions",
        "Corrected by: dana",
    ]
