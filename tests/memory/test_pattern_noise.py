"""The profile counts noise (self-recovered, false alarm) apart from real failures."""

from dataclasses import replace

from memory import RecalledIncident
from memory.patterns import OfflineSynthesizer
from memory.profile import Pattern, render_profile
from memory.schema import format_record
from tests.memory.fakes import HashingEmbedder
from tests.memory.profile_records import recalled

SIGNATURE = "SearchLatencyHigh p95 above 3 s on the search cluster"
CAUSE = "search latency on the cluster during the nightly snapshot window"


def kind(incident: RecalledIncident, resolution_kind: str) -> RecalledIncident:
    assert incident.record is not None
    record = replace(incident.record, resolution_kind=resolution_kind)
    return replace(incident, record=record, text=format_record(record))


def test_noise_is_counted_apart_and_its_steps_are_not_mitigations_that_worked() -> None:
    real = recalled(1, "search-service", SIGNATURE, CAUSE, steps="Paused the reindex job.")
    healed = kind(
        recalled(2, "search-service", SIGNATURE, CAUSE, steps="Waited; no action."), "self-recovered"
    )
    probe = kind(recalled(3, "search-service", SIGNATURE, CAUSE, steps="Ignored the probe."), "false-alarm")
    (pattern,) = OfflineSynthesizer(HashingEmbedder()).patterns([real, healed, probe])
    assert pattern.occurrences == 3 and pattern.failures == 1
    assert pattern.noise_incidents == ["INC-0002", "INC-0003"]
    assert [item.text for item in pattern.mitigations_that_worked] == ["Paused the reindex job"]
    assert "1 real failure, 2 noise (self-recovered or false alarm)" in render_profile([pattern])
    assert Pattern.from_dict(pattern.to_dict()).noise_incidents == ["INC-0002", "INC-0003"]


def test_a_pattern_of_noise_alone_comes_after_real_failures() -> None:
    noise = [kind(recalled(n, "search-service", SIGNATURE, CAUSE), "self-recovered") for n in (1, 2)]
    other = recalled(3, "cart-service", "OOM command not allowed", "cart keys written without a TTL")
    patterns = OfflineSynthesizer(HashingEmbedder()).patterns([*noise, other])
    assert [p.failures for p in patterns] == [1, 0]


def test_a_timeline_notice_is_no_first_check_and_a_step_that_made_it_worse_is_a_risky_action() -> None:
    steps = "1. 14:20 alert fired\n2. Restarted the search pods, latency got worse\n3. Paused the reindex job"
    lived = recalled(1, "search-service", SIGNATURE, CAUSE, steps=steps)
    (pattern,) = OfflineSynthesizer(HashingEmbedder()).patterns([lived])
    assert [item.text for item in pattern.first_checks] == ["Paused the reindex job"]
    assert [item.text for item in pattern.mitigations_that_worked] == ["Paused the reindex job"]
    assert [item.text for item in pattern.risky_actions] == ["Restarted the search pods, latency got worse"]
