"""Pattern names: a short failure name from the shared root-cause words, the same for the same members."""

from memory.naming import MAX_WORDS, failure_name

POOL = [
    (
        "INC-0001",
        "The checkout-service Postgres connection pool (maximumPoolSize=20) was exhausted under burst "
        "load. Requests queued until the timeout.",
    ),
    ("INC-0003", "The orders Postgres connection pool was exhausted under burst load from the batch job"),
    ("INC-0002", "A burst of retries exhausted the Postgres connection pool of payment-gateway"),
]
SERVICES = {"checkout-service", "payment-gateway"}


def test_the_name_is_the_shared_root_cause_words_without_details_or_services() -> None:
    name = failure_name(POOL, services=SERVICES, fallback="HikariPool-1 - Connection is not available")
    assert name == "Postgres connection pool was exhausted under burst load"
    assert len(name.split()) <= MAX_WORDS and "checkout" not in name.lower() and "(" not in name


def test_the_name_is_stable_whatever_order_the_members_come_in() -> None:
    names = {
        failure_name(order, services=SERVICES, fallback="x")
        for order in (POOL, POOL[::-1], POOL[1:] + POOL[:1])
    }
    assert len(names) == 1


def test_without_a_root_cause_the_fallback_names_it() -> None:
    assert failure_name([("INC-1", " ")], services=set(), fallback="x509: certificate expired") == (
        "x509: certificate expired"
    )
