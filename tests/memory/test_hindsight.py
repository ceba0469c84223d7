"""The Hindsight driver's own logic, against a fake client: grouping facts into incidents, bank setup,
error mapping, mental models. The behaviour shared with the embedded driver is pinned by the contract
suite against a real server (``test_contract.py``)."""

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

import aiohttp
import pytest
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException, NotFoundException
from hypothesis import given
from hypothesis import strategies as st

from memory.bank import BankConfig, MemoryUnavailable
from memory.config import default_bank_config
from memory.hindsight import RAW_FACTS, REFRESH_TRIGGER, HindsightBank
from memory.hindsight_results import channel_ranks, group_by_document, parse_time, to_incident, to_operation
from memory.schema import IncidentRecord, format_record
from memory.settings import MemorySettings

T0 = datetime(2026, 3, 14, 9, 12, tzinfo=UTC)
RECORD = IncidentRecord(
    incident_id="INC-0001",
    service="checkout-service",
    timestamp=T0,
    symptom="Checkout times out during a flash sale.",
    error_signature="QueuePool limit of size 20 overflow 0 reached",
    root_cause="Pool sized for average load.",
    resolution_steps="Raised the pool; added a circuit breaker.",
    runbook_used="RB-checkout-db",
    outcome="Recovered in 18 minutes.",
)


def fact(
    document_id: str | None,
    final: float,
    *,
    semantic: float | None = None,
    keyword: float | None = None,
    text: str = "a fact",
    at: datetime = T0,
    tags: list[str] | None = None,
) -> SimpleNamespace:
    return SimpleNamespace(
        text=text,
        document_id=document_id,
        tags=tags,
        metadata={"from": "fact"},
        occurred_start=None,
        mentioned_at=at.isoformat(),
        scores=SimpleNamespace(final=final, semantic=semantic, keyword=keyword),
    )


def not_found() -> ApiException:
    return NotFoundException(status=404, reason="Not Found", body='{"detail": "missing"}')


def missing_bank() -> aiohttp.ClientResponseError:
    return aiohttp.ClientResponseError(cast(Any, None), (), status=404, message="Not Found")


# ----- grouping facts into incidents -----


def test_facts_are_grouped_by_document_in_server_order() -> None:
    facts = [fact("B", 0.9), fact(None, 0.8), fact("A", 0.7), fact("B", 0.6), fact("C", 0.5)]
    groups = group_by_document(facts)
    assert [g.document_id for g in groups] == ["B", "A", "C"]
    assert [f.scores.final for f in groups[0].facts] == [0.9, 0.6]
    assert groups[0].score == 0.9


@given(st.lists(st.tuples(st.sampled_from(["A", "B", "C", "D", None]), st.floats(0, 1)), max_size=30))
def test_grouping_partitions_the_documented_facts(rows: list[tuple[str | None, float]]) -> None:
    facts = [fact(doc, score) for doc, score in rows]
    groups = group_by_document(facts)
    documented = [f for f in facts if f.document_id]
    assert sorted(map(id, (f for g in groups for f in g.facts))) == sorted(map(id, documented))
    assert [g.document_id for g in groups] == list(dict.fromkeys(f.document_id for f in documented))
    for group in groups:
        assert group.facts == [f for f in documented if f.document_id == group.document_id]


def test_channel_ranks_say_where_each_incident_ranked_in_each_channel() -> None:
    groups = group_by_document(
        [
            fact("A", 1.0, semantic=0.4, keyword=0.9),
            fact("B", 0.8, semantic=0.7, keyword=None),
            fact("A", 0.5, semantic=0.5, keyword=0.0),
            fact("C", 0.3, semantic=None, keyword=0.2),
        ]
    )
    assert channel_ranks(groups) == {
        "A": {"semantic": 2, "keyword": 1},
        "B": {"semantic": 1},
        "C": {"keyword": 2},
    }


def test_an_incident_carries_the_whole_stored_record_not_the_matching_fact() -> None:
    hits = group_by_document(
        [
            fact("INC-0001", 0.9, text="Pool sized for average load."),
            fact("INC-0001", 0.4, at=T0 + timedelta(1)),
        ]
    )[0]
    document = SimpleNamespace(
        original_text=format_record(RECORD),
        tags=["service:checkout-service", "kind:incident"],
        document_metadata={"incident_id": "INC-0001", "attempt": 2},
    )
    incident = to_incident(hits, document, {"semantic": 1})
    assert incident.record == RECORD
    assert incident.text == format_record(RECORD)
    assert incident.tags == ["service:checkout-service", "kind:incident"]
    assert incident.metadata == {"incident_id": "INC-0001", "attempt": "2"}
    assert incident.timestamp == T0 + timedelta(1)
    assert (incident.score, incident.why) == (0.9, {"semantic": 1})


def test_without_a_stored_document_the_facts_are_the_text() -> None:
    hits = group_by_document(
        [fact("RB-1", 0.5, text="Step one.", tags=["kind:runbook"]), fact("RB-1", 0.4, text="Step two.")]
    )[0]
    incident = to_incident(hits, None, {})
    assert incident.text == "Step one.\nStep two." and incident.record is None
    assert incident.tags == ["kind:runbook"] and incident.metadata == {"from": "fact"}


@pytest.mark.parametrize(
    ("server", "ours"),
    [("pending", "pending"), ("queued", "pending"), ("processing", "running"), ("completed", "completed"),
     ("failed", "failed"), ("cancelled", "failed")],
)  # fmt: skip
def test_operation_states_map_onto_the_banks_four(server: str, ours: str) -> None:
    status = SimpleNamespace(
        operation_id="op-1",
        status=server,
        operation_type="refresh_mental_model",
        task_type=None,
        mental_model_id="profile",
        error_message=None,
        created_at="2026-03-14T09:12:00",
        completed_at=None,
    )
    operation = to_operation(status)
    assert operation.status == ours and operation.target == "profile"
    assert operation.created_at == T0  # a naive server time is UTC


def test_times_are_aware_utc() -> None:
    assert parse_time("2026-03-14T10:12:00+01:00") == T0
    assert parse_time(None) is None


# ----- the driver over a fake client -----


class FakeHindsight:
    """Records calls and answers like hindsight-client would; ``fail`` makes the next call raise."""

    def __init__(self, *, bank_exists: bool = False) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.config: dict[str, Any] | None = {"store_document_text": True} if bank_exists else None
        self.directives: list[SimpleNamespace] = []
        self.documents_by_id: dict[str, SimpleNamespace] = {}
        self.recall_facts: list[SimpleNamespace] = []
        self.fail: BaseException | None = None
        self.delay_s = 0.0
        self.documents = SimpleNamespace(get_document=self._get_document)
        self.operations = SimpleNamespace(get_operation_status=self._operation_status)
        self.monitoring = SimpleNamespace(health_endpoint_health_get=self._health)
        self.banks = SimpleNamespace(get_agent_stats=self._stats)
        self.models: dict[str, SimpleNamespace] = {}
        self.closed = False

    async def _call(self, method: str, /, **kwargs: Any) -> None:
        self.calls.append((method, kwargs))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail is not None:
            raise self.fail

    def called(self, name: str) -> list[dict[str, Any]]:
        return [kwargs for called, kwargs in self.calls if called == name]

    async def aget_bank_config(self, bank_id: str) -> dict[str, Any]:
        await self._call("aget_bank_config")
        if self.config is None:
            raise missing_bank()
        return {"bank_id": bank_id, "config": dict(self.config)}

    async def acreate_bank(self, bank_id: str) -> None:
        await self._call("acreate_bank", bank_id=bank_id)
        self.config = {}

    async def aupdate_bank_config(self, bank_id: str, **updates: Any) -> None:
        await self._call("aupdate_bank_config", **updates)
        assert self.config is not None
        self.config.update(updates)

    async def alist_directives(self, bank_id: str) -> SimpleNamespace:
        await self._call("alist_directives")
        return SimpleNamespace(items=list(self.directives))

    async def acreate_directive(self, bank_id: str, *, name: str, content: str, priority: int) -> None:
        await self._call("acreate_directive", content=content)
        self.directives.append(
            SimpleNamespace(id=f"d{len(self.calls)}", content=content, priority=priority, is_active=True)
        )

    async def adelete_directive(self, bank_id: str, directive_id: str) -> None:
        await self._call("adelete_directive", id=directive_id)
        self.directives = [d for d in self.directives if d.id != directive_id]

    async def aretain(self, bank_id: str, content: str, **kwargs: Any) -> None:
        await self._call("aretain", content=content, **kwargs)

    async def arecall(self, bank_id: str, query: str, **kwargs: Any) -> SimpleNamespace:
        await self._call("arecall", query=query, **kwargs)
        return SimpleNamespace(results=list(self.recall_facts))

    async def _get_document(self, bank_id: str, document_id: str, **_: Any) -> SimpleNamespace:
        await self._call("get_document", document_id=document_id)
        if document_id not in self.documents_by_id:
            raise not_found()
        return self.documents_by_id[document_id]

    async def areflect(self, bank_id: str, query: str, **kwargs: Any) -> SimpleNamespace:
        await self._call("areflect", query=query, **kwargs)
        memories = [SimpleNamespace(document_id="INC-2"), SimpleNamespace(document_id=None)]
        memories.append(SimpleNamespace(document_id="INC-2"))
        return SimpleNamespace(
            text="answer", structured_output={"a": 1}, based_on=SimpleNamespace(memories=memories)
        )

    async def acreate_mental_model(self, bank_id: str, name: str, source_query: str, **kwargs: Any) -> Any:
        await self._call("acreate_mental_model", name=name, source_query=source_query, **kwargs)
        if kwargs["id"] in self.models:
            raise ApiException(status=409, reason="Conflict", body='{"detail": "exists"}')
        self.models[kwargs["id"]] = SimpleNamespace(id=kwargs["id"], name=name)
        return SimpleNamespace(mental_model_id=kwargs["id"], operation_id="op-create")

    async def aupdate_mental_model(self, bank_id: str, model_id: str, **kwargs: Any) -> None:
        await self._call("aupdate_mental_model", model_id=model_id, **kwargs)

    async def arefresh_mental_model(self, bank_id: str, model_id: str) -> SimpleNamespace:
        await self._call("arefresh_mental_model", model_id=model_id)
        if model_id not in self.models:
            raise not_found()
        return SimpleNamespace(operation_id="op-refresh", status="queued")

    async def aget_mental_model(self, bank_id: str, model_id: str, **_: Any) -> SimpleNamespace:
        await self._call("aget_mental_model")
        raise not_found()

    async def _operation_status(self, bank_id: str, operation_id: str, **_: Any) -> SimpleNamespace:
        await self._call("get_operation_status")
        raise ApiException(status=400, reason="Bad Request", body='{"detail": "not a uuid"}')

    async def _health(self, **_: Any) -> dict[str, str]:
        await self._call("health")
        return {"status": "healthy"}

    async def _stats(self, bank_id: str, **_: Any) -> SimpleNamespace:
        await self._call("get_agent_stats")
        if self.config is None:
            raise not_found()
        return SimpleNamespace(
            total_documents=3, pending_operations=1, last_memory_write_at="2026-03-14T09:12:00+00:00"
        )

    async def aclose(self) -> None:
        self.closed = True


def driver(fake: FakeHindsight, timeout_s: float = 5.0) -> HindsightBank:
    settings = MemorySettings(
        memory="hindsight",
        bank_id="unit",
        hindsight_base_url="http://127.0.0.1:9",
        memory_timeout_s=timeout_s,
    )
    return HindsightBank(settings, connect=cast(Callable[[], Hindsight], lambda: fake))


async def test_the_first_write_creates_the_bank_with_mission_directives_and_dispositions() -> None:
    fake = FakeHindsight()
    await driver(fake).retain(document_id="INC-0001", content="x", tags=[], metadata={}, timestamp=T0)
    expected = default_bank_config()
    update = fake.called("aupdate_bank_config")[0]
    assert update["reflect_mission"] == expected.mission
    assert update["disposition_skepticism"] == 4 and update["disposition_literalism"] == 4
    assert [d["content"] for d in fake.called("acreate_directive")] == expected.directives
    stored = await driver(fake).get_config()
    assert stored.directives == expected.directives  # priorities keep their order


async def test_reads_of_a_bank_the_server_lacks_answer_empty_and_create_nothing() -> None:
    fake = FakeHindsight()
    bank = driver(fake)
    assert await bank.recall(query="pool") == [] and await bank.stored_tags("INC-0001") is None
    assert (await bank.reflect(query="what broke?")).text == ""
    assert await bank.get_mental_model("m") is None and await bank.list_mental_models() == []
    assert await bank.get_operation("op") is None
    assert (await bank.get_config()).mission == default_bank_config().mission  # what a write creates
    with pytest.raises(KeyError, match="no mental model"):
        await bank.refresh_mental_model("m")
    assert not fake.called("acreate_bank") and not fake.called("aupdate_bank_config")


async def test_an_existing_bank_keeps_its_configuration() -> None:
    fake = FakeHindsight(bank_exists=True)
    bank = driver(fake)
    await bank.recall(query="pool")
    await bank.recall(query="pool")
    assert not fake.called("acreate_bank") and not fake.called("aupdate_bank_config")
    assert len(fake.called("aget_bank_config")) == 1  # checked once, not per call


async def test_configure_makes_the_directives_exactly_the_given_ones() -> None:
    fake = FakeHindsight()
    bank = driver(fake)
    await bank.configure(BankConfig(mission="m", directives=["keep", "new"], dispositions={"skepticism": 5}))
    await bank.configure(BankConfig(mission="m", directives=["keep", "newer"], dispositions={}))
    assert [d.content for d in fake.directives] == ["keep", "newer"]
    with pytest.raises(ValueError, match="unknown dispositions"):
        await bank.configure(BankConfig(mission="m", directives=[], dispositions={"humour": 3}))


async def test_recall_returns_limit_incidents_with_their_full_records() -> None:
    fake = FakeHindsight(bank_exists=True)
    fake.recall_facts = [
        fact("INC-0001", 0.9, semantic=0.8),
        fact("INC-0002", 0.8, keyword=0.5),
        fact("INC-0001", 0.7),
        fact("INC-0003", 0.6, semantic=0.9),
    ]
    fake.documents_by_id["INC-0001"] = SimpleNamespace(
        original_text=format_record(RECORD), tags=["service:checkout-service"], document_metadata={}
    )
    found = await driver(fake).recall(
        query="pool exhausted", tags=["service:checkout-service"], tags_match="any_strict", limit=2
    )
    assert [r.id for r in found] == ["INC-0001", "INC-0002"]
    assert found[0].record == RECORD and found[1].record is None  # INC-0002 vanished: its facts' text
    assert found[0].why == {"semantic": 2}  # INC-0003 was semantically closer, though fused lower
    call = fake.called("arecall")[0]
    assert call["types"] == RAW_FACTS and call["tags_match"] == "any_strict" and call["max_tokens"] >= 4096
    assert [c["document_id"] for c in fake.called("get_document")] == ["INC-0001", "INC-0002"]
    assert await driver(fake).recall(query="pool", limit=0) == []


async def test_append_unites_tags_and_lets_newer_metadata_win() -> None:
    fake = FakeHindsight(bank_exists=True)
    fake.documents_by_id["INC-0001"] = SimpleNamespace(
        original_text="x",
        tags=["service:checkout-service", "kind:incident"],
        document_metadata={"a": "1", "b": "1"},
    )
    bank = driver(fake)
    await bank.retain(
        document_id="INC-0001",
        content="Correction: idle-in-transaction sessions.",
        tags=["kind:correction"],
        metadata={"b": "2"},
        timestamp=T0,
        update_mode="append",
    )
    sent = fake.called("aretain")[0]
    assert sent["tags"] == ["service:checkout-service", "kind:incident", "kind:correction"]
    assert sent["metadata"] == {"a": "1", "b": "2"}
    assert sent["update_mode"] == "append" and sent["document_id"] == "INC-0001" and sent["timestamp"] == T0


async def test_retain_refuses_what_would_break_idempotence_or_the_metadata_contract() -> None:
    bank = driver(FakeHindsight(bank_exists=True))
    with pytest.raises(ValueError, match="document_id"):
        await bank.retain(document_id="", content="x", tags=[], metadata={}, timestamp=T0)
    with pytest.raises(ValueError, match="timezone"):
        await bank.retain(document_id="d", content="x", tags=[], metadata={}, timestamp=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="strings"):
        await bank.retain(document_id="d", content="x", tags=[], metadata=cast(Any, {"n": 1}), timestamp=T0)


@pytest.mark.parametrize(
    "error",
    [
        ApiException(status=500, reason="Internal Server Error", body="boom"),
        ApiException(status=400, reason="Bad Request", body='{"detail": "query too long"}'),
        aiohttp.ClientConnectionError("connection refused"),
        ConnectionRefusedError("refused"),
    ],
)
async def test_client_errors_become_memory_unavailable(error: BaseException) -> None:
    fake = FakeHindsight(bank_exists=True)
    bank = driver(fake)
    fake.fail = error
    with pytest.raises(MemoryUnavailable, match="hindsight"):
        await bank.recall(query="pool")


async def test_a_server_that_does_not_answer_times_out_as_memory_unavailable() -> None:
    fake = FakeHindsight(bank_exists=True)
    fake.delay_s = 30.0
    with pytest.raises(MemoryUnavailable, match=r"within 0\.05s"):
        await asyncio.wait_for(driver(fake, timeout_s=0.05).recall(query="pool"), timeout=10)


async def test_reflect_cites_the_documents_it_rests_on() -> None:
    fake = FakeHindsight(bank_exists=True)
    answer = await driver(fake).reflect(query="why?", response_schema={"type": "object"})
    assert answer.based_on == ["INC-2"] and answer.structured == {"a": 1}
    assert fake.called("areflect")[0]["include_facts"] is True


async def test_mental_models_refresh_after_consolidation_and_exist_once() -> None:
    fake = FakeHindsight(bank_exists=True)
    bank = driver(fake)
    first = await bank.create_mental_model(model_id="profile", name="Profile", source_query="patterns?")
    assert (first.id, first.status, first.target) == ("op-create", "pending", "profile")
    assert fake.called("acreate_mental_model")[0]["trigger"] == REFRESH_TRIGGER
    again = await bank.create_mental_model(model_id="profile", name="Profile v2", source_query="patterns?")
    assert again.id == "op-refresh"
    assert fake.called("aupdate_mental_model")[0]["name"] == "Profile v2"
    with pytest.raises(KeyError):
        await bank.refresh_mental_model("nope")
    assert await bank.get_mental_model("nope") is None
    assert await bank.get_operation("not-an-id") is None


async def test_health_reports_instead_of_raising() -> None:
    fake = FakeHindsight()
    bank = driver(fake)
    fresh = await bank.health()
    assert fresh.ok and fresh.documents == 0 and "no bank yet" in fresh.detail
    await bank.retain(document_id="INC-0001", content="x", tags=[], metadata={}, timestamp=T0)
    used = await bank.health()
    assert used.documents == 3 and used.last_memory_seen_at == T0  # the newest write, for the profile
    fake.fail = aiohttp.ClientConnectionError("refused")
    down = await bank.health()
    assert not down.ok and down.driver == "hindsight" and "refused" in down.detail
    # a replica given the wrong server, or the wrong key, says which server it asked
    fake.fail = ApiException(status=401, reason="Unauthorized")
    refused = await bank.health()
    assert refused.detail.startswith("http://127.0.0.1:9: ") and "401" in refused.detail, refused.detail
    assert down.detail.startswith("http://127.0.0.1:9: "), down.detail


def test_each_event_loop_gets_its_own_client() -> None:
    clients: list[FakeHindsight] = []

    def connect() -> FakeHindsight:
        clients.append(FakeHindsight(bank_exists=True))
        return clients[-1]

    settings = MemorySettings(memory="hindsight", bank_id="unit", hindsight_base_url="http://127.0.0.1:9")
    bank = HindsightBank(settings, connect=cast(Callable[[], Hindsight], connect))
    thread = threading.Thread(target=asyncio.run, args=(bank.recall(query="from the worker"),))
    thread.start()
    thread.join(10)
    asyncio.run(bank.recall(query="from the web app"))
    assert [c.called("arecall")[0]["query"] for c in clients] == ["from the worker", "from the web app"]


def test_a_loop_ending_closes_its_own_client_and_no_other() -> None:
    """A worker lane's loop ends before the web app's: its session is closed on it, the app's stays open."""
    clients: list[FakeHindsight] = []

    def connect() -> FakeHindsight:
        clients.append(FakeHindsight(bank_exists=True))
        return clients[-1]

    settings = MemorySettings(memory="hindsight", bank_id="unit", hindsight_base_url="http://127.0.0.1:9")
    bank = HindsightBank(settings, connect=cast(Callable[[], Hindsight], connect))

    async def lane() -> None:
        await bank.recall(query="from the worker")
        await bank.release_loop()

    async def web_app() -> None:
        await bank.recall(query="from the web app")
        thread = threading.Thread(target=asyncio.run, args=(lane(),))
        thread.start()
        await asyncio.to_thread(thread.join, 10)
        assert [c.closed for c in clients] == [False, True]
        await bank.recall(query="still served")
        assert len(clients) == 2 and clients[0].called("arecall")[-1]["query"] == "still served"

    asyncio.run(web_app())


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


async def test_a_server_that_never_answers_is_unavailable_within_the_timeout(silent_port: int) -> None:
    settings = MemorySettings(
        memory="hindsight",
        bank_id="silent",
        hindsight_base_url=f"http://127.0.0.1:{silent_port}",
        memory_timeout_s=0.5,
    )
    bank = HindsightBank(settings)
    try:
        with pytest.raises(MemoryUnavailable, match="within"):
            await asyncio.wait_for(bank.recall(query="pool"), timeout=30)
        health = await asyncio.wait_for(bank.health(), timeout=30)
        assert not health.ok
    finally:
        await bank.close()
