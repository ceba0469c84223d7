"""What kind of line a claim is: read once from its field, or else its words, where it is stamped."""

import pytest

from agent.core.claim_kind import is_action, named_in, reads_as_action, services_named
from agent.core.schema import Claim, ClaimField, EvidenceItem

ITEMS = [
    EvidenceItem(n=1, kind="alert", service="checkout-service", title="alert", text="..."),
    EvidenceItem(n=2, kind="incident", id="INC-1", service="checkout-service", title="INC-1", text="."),
    EvidenceItem(n=3, kind="runbook", id="RB-1", title="RB-1", text="."),
    EvidenceItem(n=4, kind="profile", id="pattern-1", title="pattern", text="."),
    EvidenceItem(n=5, kind="incident", id="INC-9", service="loyalty-service", title="INC-9", text="."),
]


def _claim(field: ClaimField | None, statement: str, n: int = 2, record: str | None = None) -> Claim:
    return Claim(
        text=f"lead: {statement}",
        citations=[n],
        role="check",
        field=field,
        statement=statement,
        record=record,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Confirmed pool saturation on the dashboard", True),
        ("Roll pods one at a time", True),
        ("Postgres: SELECT count(*) FROM pg_stat_activity", True),
        ("The pool was idle the whole time", False),
        ("p99 is 2.4s", False),
    ],
)
def test_actions_are_told_from_statements(text: str, expected: bool) -> None:
    assert reads_as_action(text) is expected


def test_the_field_decides_before_the_words() -> None:
    assert is_action(_claim("signature", "p99 is 2.4s"), ITEMS)
    assert not is_action(_claim("outcome", "Raised alerts came back in 5 min"), ITEMS)
    assert is_action(_claim("first_check", "pool gauge at max", 3), ITEMS)  # a runbook's first check
    assert not is_action(_claim("first_check", "pool gauge at max", 4), ITEMS)  # a pattern's must read as one
    assert is_action(_claim("resolution_step", "Drained the queue"), ITEMS)
    assert not is_action(_claim("resolution_step", "The pool was idle"), ITEMS)


def test_the_services_a_statement_names_are_those_of_the_evidence() -> None:
    assert services_named(_claim("resolution_step", "Cut loyalty-service's pool to 30"), ITEMS) == [
        "loyalty-service"
    ]
    assert services_named(_claim("resolution_step", "Cut the loyalty pool to 30"), ITEMS) == []
    assert services_named(_claim("runbook", "Pool", 3, record="loyalty-service-pool"), ITEMS) == [
        "loyalty-service"
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("restart all checkout pods", ["checkout-service"]),
        ("checkout-service pool at 100%", ["checkout-service"]),
        ("the payment-gateway answered 502", ["payment-gateway"]),
        ("checkouts are slow", []),  # a word of its own, not the service
        ("restart the api pods", []),  # "api-svc" is too short a name once its suffix goes
    ],
)
def test_a_spoken_move_names_a_service_with_or_without_its_service_suffix(
    text: str, named: list[str]
) -> None:
    services = ["checkout-service", "payment-gateway", "api-svc", "inventory_service"]
    assert named_in(text, services, spoken=True) == named
    assert named_in("restart all checkout pods", services) == []  # a recorded line, read as written
