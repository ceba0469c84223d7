"""The startup report reads back from its JSON, CPU time and load beside the wall time, and an older
report without them still renders."""

import json

from evals.bench.startup import CommandTiming, StartupResult, summary


def test_cpu_time_and_load_survive_the_json_and_are_shown() -> None:
    result = StartupResult(
        runs=3,
        floor_p50_s=0.05,
        commands={"ask": CommandTiming(p50_s=1.5, p95_s=1.7, ratio_to_floor=30.0, cpu_p50_s=1.25)},
        floor_cpu_p50_s=0.04,
        load_1m=(2.5, 3.0),
    )
    again = StartupResult.of(json.loads(json.dumps(result.as_dict())))
    assert again == result
    text = summary(again)
    assert "| ask | 1.5 | 1.7 | 30.0 | 1.25 |" in text
    assert "CPU 0.04 s" in text and "load average 2.5 before, 3.0 after" in text


def test_a_report_from_before_cpu_time_renders_with_dashes() -> None:
    old = {
        "runs": 3,
        "floor_p50_s": 0.05,
        "commands": {"help": {"p50_s": 0.2, "p95_s": 0.3, "ratio_to_floor": 4.0}},
    }
    text = summary(StartupResult.of(old))
    assert "| help | 0.2 | 0.3 | 4.0 | – |" in text and "load average" not in text
