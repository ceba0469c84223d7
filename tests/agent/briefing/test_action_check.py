"""The action guard's verdicts on hand-made records: scope, contrast, and silence on unrelated moves."""

from agent.briefing.action_check import check_action, moves_from_record, moves_from_runbook
from agent.core.similarity import Similarity
from memory.embedder import MiniLMEmbedder
from tests.agent.fakes import record

CHECKOUT = record(
    "INC-0001",
    resolution_steps="1. Raised the pool size to 50\n2. Rolled the pods one at a time",
    failed_attempts="Scaling checkout from 6 to 18 pods made it worse: each pod opened its own pool",
)
PAYMENTS = record(
    "INC-0002",
    "payment-gateway",
    resolution_steps="1. Cut retries to 2 with backoff",
    failed_attempts="Restarting the payment pods brought the retry storm back",
)
RUNBOOK = "RUNBOOK RB-1 — checkout-service\nTitle: pool\nRisky actions:\n- Flushing the cache during a sale"
MOVES = [
    *moves_from_record(CHECKOUT),
    *moves_from_record(PAYMENTS),
    *moves_from_runbook("RB-1", "checkout-service", RUNBOOK),
]
SIMILARITY = Similarity(MiniLMEmbedder())


def test_a_paraphrased_failed_attempt_is_risky_and_cited() -> None:
    result = check_action("add more checkout pods", MOVES, service="checkout-service", similarity=SIMILARITY)
    assert (result.verdict, result.scope) == ("risky", "service")
    assert result.citations[0] == "INC-0001"
    assert "failed attempt" in result.sentence and "2026-03-14" in result.sentence


def test_a_resolution_step_worked_before_and_says_what_happened_then() -> None:
    result = check_action("raise the pool size", MOVES, service="checkout-service", similarity=SIMILARITY)
    assert result.verdict == "worked before"
    assert "Recovered in 20 minutes" in result.sentence


def test_a_runbook_risky_action_counts() -> None:
    result = check_action("flush the cache", MOVES, service="checkout-service", similarity=SIMILARITY)
    assert result.verdict == "risky" and result.citations[0] == "RB-1"


def test_other_services_are_consulted_only_when_the_own_service_has_nothing() -> None:
    result = check_action(
        "restart the payment pods", MOVES, service="checkout-service", similarity=SIMILARITY
    )
    assert (result.verdict, result.scope, result.citations) == ("risky", "cross-service", ["INC-0002"])
    assert "another service" in result.sentence


def test_an_unrelated_move_has_no_record() -> None:
    result = check_action("update the status page", MOVES, service="checkout-service", similarity=SIMILARITY)
    assert (result.verdict, result.matches) == ("no record", [])


def test_without_an_embedder_words_alone_decide_more_strictly() -> None:
    words = Similarity(None)
    assert (
        check_action("scaling checkout pods", MOVES, service="checkout-service", similarity=words).verdict
        == "risky"
    )
    assert (
        check_action("update the status page", MOVES, service="checkout-service", similarity=words).verdict
        == "no record"
    )


def test_a_resolution_step_that_says_it_did_not_help_is_risky_not_worked_before() -> None:
    tried = record(
        "INC-0003",
        resolution_steps="1. Restarted the checkout pods, which did not help\n2. Raised the pool size to 50",
        failed_attempts="",
    )
    result = check_action(
        "restart the checkout pods",
        moves_from_record(tried),
        service="checkout-service",
        similarity=SIMILARITY,
    )
    assert (result.verdict, result.citations) == ("risky", ["INC-0003"])


def test_a_move_on_another_service_is_judged_by_that_services_records_first() -> None:
    scaled = record("INC-0004", resolution_steps="1. Scaled payment-gateway from 8 to 14 pods")
    moves = [*MOVES, *moves_from_record(scaled)]
    result = check_action(
        "restart the payment-gateway pods", moves, service="checkout-service", similarity=SIMILARITY
    )
    assert (result.verdict, result.citations[0]) == ("risky", "INC-0002")


def test_a_lone_letter_matches_no_move() -> None:
    """ "x" (a stray key, or the "x" of "30 pods x pool size") names no move: it is no "worked before"."""
    sized = record("INC-0003", resolution_steps="1. Raised max_client_conn to fit 30 pods x pool size")
    moves = moves_from_record(sized)
    for similarity in (SIMILARITY, Similarity(None)):
        result = check_action("x", moves, service="checkout-service", similarity=similarity)
        assert (result.verdict, result.matches) == ("no record", [])
    assert check_action(
        "raise max_client_conn", moves, service="checkout-service", similarity=SIMILARITY
    ).verdict == ("worked before")


def test_a_move_naming_a_service_without_its_suffix_is_judged_by_that_services_records() -> None:
    """During an inventory incident an engineer types "restart all checkout pods": checkout-service's
    record says that made it worse, and an inventory step whose pods restarted as it recovered must not
    answer "worked before"."""
    stampede = record(
        "INC-0005", failed_attempts="Restarting all checkout pods at once caused a cold-start stampede"
    )
    rollback = record(
        "INC-0006",
        "inventory-service",
        resolution_steps="1. Rolled back the morning deploy; the pool recovered as pods restarted",
    )
    moves = [*moves_from_record(stampede), *moves_from_record(rollback)]
    result = check_action(
        "restart all checkout pods", moves, service="inventory-service", similarity=SIMILARITY
    )
    assert (result.verdict, result.citations[0]) == ("risky", "INC-0005")


def test_what_a_resolution_step_reports_as_its_effect_is_no_move_that_worked() -> None:
    """The rollback fixed it and the pods restarted as a result: restarting did not fix it last time.
    A record whose step was the restart still answers "worked before", whatever the step says it did."""
    rollback = record(
        "INC-0007",
        "inventory-service",
        resolution_steps="1. Rolled back the morning deploy; the pool recovered as pods restarted",
    )
    restart = record(
        "INC-0008", "inventory-service", resolution_steps="1. Restarted the inventory pods; errors stopped"
    )
    ask = "restart inventory pods"
    alone = check_action(ask, moves_from_record(rollback), service="inventory-service", similarity=SIMILARITY)
    assert (alone.verdict, alone.citations) == ("no record", [])
    rolled_back = check_action(
        "roll back the deploy",
        moves_from_record(rollback),
        service="inventory-service",
        similarity=SIMILARITY,
    )
    assert (rolled_back.verdict, rolled_back.citations) == ("worked before", ["INC-0007"])
    both = check_action(
        ask,
        [*moves_from_record(rollback), *moves_from_record(restart)],
        service="inventory-service",
        similarity=SIMILARITY,
    )
    assert (both.verdict, both.citations) == ("worked before", ["INC-0008"])
