"""``recallops profile`` as an operator runs it: a mistyped service is refused, not profiled."""

import sqlite3
from pathlib import Path

from tests.support.server import LiveServer


def test_a_service_no_incident_is_on_is_refused_and_leaves_no_profile(tmp_path: Path) -> None:
    operator = LiveServer(data_dir=tmp_path / "data")
    operator.cli("seed")
    for command in ("refresh", "show"):
        refused = operator.cli("profile", command, "--service", "chekout-service", check=False)
        assert refused.returncode == 2, refused.stderr
        assert "'chekout-service'" in refused.stderr and "checkout-service" in refused.stderr
    with sqlite3.connect(tmp_path / "data" / "recallops.db") as store:
        assert store.execute("SELECT count(*) FROM profile_state").fetchone() == (0,)
