"""The recall tool's records: lookalikes the alert contradicts take no precedent's place."""

import asyncio

from agent.core.tools import LOOKALIKE_SLACK, recall_past_lookalikes
from memory import RecalledIncident
from tests.agent.fakes import record
from tests.memory.fakes import ListRecall

ALERT = "checkout p99 3.1s; threads blocked acquiring a db connection, 150 waiting in the pool"


def _incident(ident: str, rank: int, symptom: str) -> RecalledIncident:
    rec = record(ident, symptom=symptom, error_signature="CheckoutLatencyHigh: p99 above 2 s")
    return RecalledIncident(ident, "", rec, 0.5, {"keyword": rank, "semantic": rank}, [], {}, None)


def test_a_contradicted_lookalike_neither_takes_a_place_nor_pushes_the_fault_down() -> None:
    lookalike = _incident("LOOK", 1, "p99 at 2.6 s during the import, no connection waits")
    fault = _incident("POOL", 2, "checkout requests waiting on the connection pool")
    other = _incident("SLOW", 3, "checkout slow after a deploy")
    beyond = _incident("LATE", 4, "checkout slow after a config change")
    bank = ListRecall([lookalike, fault, other, beyond])
    found = asyncio.run(recall_past_lookalikes(bank, ALERT, ALERT, "checkout-service", 2))
    assert bank.limits == [2 + LOOKALIKE_SLACK]
    assert [(i.id, i.why["keyword"]) for i in found] == [("LOOK", 1), ("POOL", 1), ("SLOW", 2)]


def test_without_a_lookalike_the_search_is_memorys_own() -> None:
    fault = _incident("POOL", 1, "checkout requests waiting on the connection pool")
    bank = ListRecall([fault, _incident("SLOW", 2, "checkout slow after a deploy")])
    found = asyncio.run(recall_past_lookalikes(bank, ALERT, ALERT, None, 1))
    assert found == bank.found[:1]


def test_without_room_the_lookalike_keeps_its_place_and_still_pushes_nothing_down() -> None:
    """The search the relevance model re-ranks: it asks for no more, since a lookalike never outranks
    a precedent there, but the ranks it reads are still counted without it."""
    lookalike = _incident("LOOK", 1, "p99 at 2.6 s during the import, no connection waits")
    fault = _incident("POOL", 2, "checkout requests waiting on the connection pool")
    bank = ListRecall([lookalike, fault, _incident("SLOW", 3, "checkout slow after a deploy")])
    found = asyncio.run(recall_past_lookalikes(bank, ALERT, ALERT, None, 2, slack=0))
    assert bank.limits == [2]
    assert [(i.id, i.why["keyword"]) for i in found] == [("LOOK", 1), ("POOL", 1)]
