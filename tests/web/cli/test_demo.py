"""``recallops demo`` prints where people reach the service: the public address when one is set."""

from pathlib import Path

from tests.support.server import LiveServer


def test_the_demo_names_the_public_address_people_reach(tmp_path: Path) -> None:
    operator = LiveServer(tmp_path / "data", env={"RECALLOPS_PUBLIC_URL": "https://recallops.example.org/"})
    said = operator.cli("demo").stdout
    assert "open https://recallops.example.org/ and sign in" in said
    assert "curl -sS -X POST https://recallops.example.org/api/v1/alerts" in said
