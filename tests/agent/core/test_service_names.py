"""Where a text names a service, as written or as engineers say it, and the text without those names."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.service_names import named_in, without_names

SERVICES = ["checkout-service", "payment-gateway", "api-svc", "inventory_service"]


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
    assert named_in(text, SERVICES, spoken=True) == named
    assert named_in("restart all checkout pods", SERVICES) == []  # a recorded line, read as written


def test_a_search_without_the_names_keeps_the_failure_words() -> None:
    """ "inserts failing on order, cart and checkout" names three services and one failure: without the
    names, the failure is what is left to search for."""
    services = ["order-service", "cart-service", "checkout-service", "postgres-primary"]
    text = "inserts failing on order, cart and checkout at once; checkout-service writes erroring"
    left = without_names(text, services)
    assert named_in(left, services, spoken=True) == []
    assert left.split() == ["inserts", "failing", "on", ",", "and", "at", "once;", "writes", "erroring"]
    assert (
        without_names("the api pods and checkouts are slow", SERVICES)
        == "the api pods and checkouts are slow"
    )


_WORDS = st.sampled_from(
    ["checkout", "checkout-service", "payment-gateway", "pool", "api", "order", "-", " "]
)


@given(
    st.lists(_WORDS, max_size=12).map(" ".join), st.lists(st.sampled_from([*SERVICES, "order"]), max_size=4)
)
def test_no_service_is_named_once_its_names_are_taken_out(text: str, services: list[str]) -> None:
    assert named_in(without_names(text, services), services, spoken=True) == []
