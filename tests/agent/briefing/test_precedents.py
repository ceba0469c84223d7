"""What the top precedents say together: noise first, disagreement said, nothing reliable said plainly."""

from dataclasses import replace

from agent.briefing.assemble import seen_before
from agent.briefing.precedents import dispute_sentence, noise_sentence, read
from tests.agent.fakes import match, record

POOL = record("PM-1", root_cause="Connection pool sized for average load during the flash sale")
SNAPSHOT = replace(
    record("PM-2", root_cause="Nightly snapshot I/O slowed queries; it cleared when the snapshot ended"),
    resolution_kind="self-recovered",
)
PROBE = replace(
    record("PM-3", root_cause="A synthetic probe hit a retired endpoint"), resolution_kind="false-alarm"
)
VACUUM = record("PM-4", root_cause="Autovacuum on the orders table competed with inserts at peak")
INDEX = record("PM-5", root_cause="A migration dropped the customer index, so lookups scanned the table")


def test_noise_leads_when_the_best_precedent_needed_no_fix() -> None:
    reading = read([match(SNAPSHOT, 0.8, 2), match(PROBE, 0.7, 3), match(POOL, 0.55, 4)])
    assert [m.incident.id for m in reading.noise] == ["PM-2", "PM-3"] and not reading.disputed
    sentence = noise_sentence(reading)
    assert sentence.startswith("Likely noise: 2 of the 3 closest past incidents")
    assert "PM-2 self-recovered on 2026-03-14 [2]" in sentence and "PM-3 false alarm" in sentence
    assert "One did need a fix: PM-1 on 2026-03-14 [4]" in sentence


def test_a_single_noise_precedent_is_said_in_the_singular() -> None:
    sentence = noise_sentence(read([match(SNAPSHOT, 0.9, 2)]))
    assert sentence.startswith("Likely noise: the closest past incident with this alert needed no fix")
    assert "1 of the 1" not in sentence


def test_a_real_fault_about_as_close_as_the_lookalike_makes_it_a_dispute_not_noise() -> None:
    reading = read([match(SNAPSHOT, 0.46, 5), match(POOL, 0.39, 2)])
    assert reading.noise == [] and [m.incident.id for m in reading.disputed] == ["PM-2", "PM-1"]
    sentence = dispute_sentence(reading)
    assert sentence.startswith("The closest precedents disagree: PM-2 self-recovered on 2026-03-14 [5]")
    assert "PM-1 on 2026-03-14 [2] is about as close and needed a fix" in sentence


def test_a_lookalike_ruled_out_for_this_alert_before_says_nothing_of_noise() -> None:
    ranked = [match(SNAPSHOT, 0.8, 2), match(PROBE, 0.7, 3), match(POOL, 0.4, 4)]
    assert (
        read(ranked, ruled_out={"PM-2", "PM-3"}).noise == []
    )  # the last time it looked like this, it was not
    sentence = noise_sentence(read(ranked, ruled_out={"PM-2"}))
    assert sentence.startswith("Likely noise: 1 of the 2 closest past incidents") and "PM-2" not in sentence
    assert "One did need a fix: PM-1" in sentence
    # A real fault's record an engineer ruled out is still a record that needed a fix.
    assert [m.incident.id for m in read(ranked, ruled_out={"PM-1"}).noise] == ["PM-2", "PM-3"]


def test_a_noise_precedent_behind_a_real_fault_does_not_make_it_noise() -> None:
    reading = read([match(POOL, 0.8, 2), match(SNAPSHOT, 0.7, 3)])
    assert reading.noise == [] and reading.reliable


def test_two_strong_precedents_with_different_causes_are_disputed() -> None:
    reading = read([match(INDEX, 0.84, 2), match(VACUUM, 0.63, 3)])
    assert [m.incident.id for m in reading.disputed] == ["PM-5", "PM-4"]
    assert "disagree on the root cause: PM-5 [2] and PM-4 [3]" in dispute_sentence(reading)


def test_precedents_that_agree_or_are_far_apart_are_not_disputed() -> None:
    again = record("PM-6", root_cause="The connection pool was sized for average load, not the sale burst")
    assert read([match(POOL, 0.8, 2), match(again, 0.79, 3)]).disputed == []
    assert read([match(INDEX, 0.9, 2), match(VACUUM, 0.42, 3)]).disputed == []


def test_nothing_over_the_threshold_is_no_reliable_precedent() -> None:
    reading = read([match(POOL, 0.25, 2)])
    assert not reading.reliable and reading.noise == [] and reading.disputed == []


def test_only_a_settled_undisputed_precedent_on_the_service_has_happened_before() -> None:
    settled = [match(POOL, 0.9, 2)]
    assert seen_before(settled, read(settled)) == "recurring"
    strong = [match(POOL, 0.6, 2)]
    assert seen_before(strong, read(strong)) == "similar"
    disputed = [match(INDEX, 0.9, 2), match(VACUUM, 0.85, 3)]
    assert read(disputed).disputed and seen_before(disputed, read(disputed)) == "similar"
    weak = [match(POOL, 0.2, 2)]
    assert seen_before(weak, read(weak)) == "novel"
