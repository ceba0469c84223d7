"""The pages benchmark runs end to end at a tiny size and reports every page beside its floor."""

from evals.bench.pages import run_pages_bench, summary


def test_pages_bench_reports_every_page() -> None:
    result = run_pages_bench(incidents=20, runs=2, bank_records=40)
    names = [t.page for t in result.pages]
    assert names[:2] == ["incident list", "incident list, filtered"]
    assert {
        "incident (open)",
        "incident (resolved)",
        "resolve form",
        "record",
        "profile",
        "memory search",
    } <= set(names)
    assert all(t.p50_ms > 0 and t.bytes > 0 for t in result.pages)
    assert result.floor.page == "healthz"
    data = result.as_dict()
    assert data["incidents"] == 20 and "floor_p50_ms" in data
    assert "memory search" in summary(result)
