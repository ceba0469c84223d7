"""The embedded driver's own behaviour: sync across connections and processes, append, reload, filters."""

import asyncio
import dataclasses
import json
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.bank import MemoryBank, ReflectAnswer, TagsMatch
from memory.embedded.bank import EmbeddedBank
from memory.embedded.index import VectorIndex
from memory.embedded.search import (
    KeywordChannel,
    candidate_depth,
    match_expression,
    query_terms,
    tag_condition,
    tag_filter,
)
from memory.embedded.store import FTS, SCHEMA_VERSION, IndexRow, scope_words
from memory.schema import IncidentRecord, format_record
from memory.service import incident_write, log_incident, log_incidents
from memory.settings import MemorySettings
from tests.memory.conftest import wait_operation
from tests.memory.fakes import CountingEmbedder, HashingEmbedder, RecordingSynthesizer
from tests.memory.test_runbooks import RUNBOOK

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def make_bank(data_dir: Path, **kwargs: object) -> EmbeddedBank:
    embedder = kwargs.pop("embedder", HashingEmbedder())
    synthesizer = kwargs.pop("synthesizer", RecordingSynthesizer())
    return EmbeddedBank(
        MemorySettings(data_dir=data_dir, **kwargs), embedder=embedder, synthesizer=synthesizer
    )  # type: ignore[arg-type]


@pytest.fixture
async def bank(tmp_path: Path) -> AsyncIterator[EmbeddedBank]:
    opened = make_bank(tmp_path)
    yield opened
    await opened.close()


async def put(bank: MemoryBank, doc: str, text: str, tags: list[str], hours: int = 0) -> None:
    await bank.retain(
        document_id=doc, content=text, tags=tags, metadata={"doc": doc}, timestamp=T0 + timedelta(hours=hours)
    )


async def test_append_mode_grows_the_document(bank: EmbeddedBank) -> None:
    await put(bank, "INC-1", "first note about redis eviction", ["service:cache"])
    await bank.retain(
        document_id="INC-1",
        content="second note: maxmemory policy changed",
        tags=["kind:correction"],
        metadata={"extra": "yes"},
        timestamp=T0 + timedelta(days=1),
        update_mode="append",
    )
    (found,) = await bank.recall(query="redis eviction maxmemory", limit=5)
    assert found.text == "first note about redis eviction\n\nsecond note: maxmemory policy changed"
    assert found.tags == ["service:cache", "kind:correction"]
    assert found.metadata == {"doc": "INC-1", "extra": "yes"}
    assert found.record is None  # free text is recalled as text


async def test_append_to_a_missing_document_creates_it(bank: EmbeddedBank) -> None:
    await bank.retain(
        document_id="new", content="only text", tags=[], metadata={}, timestamp=T0, update_mode="append"
    )
    assert [r.text for r in await bank.recall(query="only text")] == ["only text"]


async def test_writes_from_another_connection_are_seen(tmp_path: Path) -> None:
    reader, writer = make_bank(tmp_path), make_bank(tmp_path)
    try:
        await put(reader, "a", "disk full on the build agents", ["service:ci"])
        assert [r.id for r in await reader.recall(query="disk full")] == ["a"]
        await put(writer, "b", "disk full on the log volume", ["service:logs"])
        await put(writer, "a", "inode exhaustion on the build agents", ["service:ci"])
        found = {r.id: r for r in await reader.recall(query="disk full inode exhaustion", limit=5)}
        assert set(found) == {"a", "b"}
        assert found["a"].text == "inode exhaustion on the build agents"
    finally:
        await reader.close()
        await writer.close()


async def test_writes_from_another_process_are_seen(tmp_path: Path, bank: EmbeddedBank) -> None:
    """The fixture's bank and a separate process share ``tmp_path/memory.db``."""
    await put(bank, "local", "kafka consumer lag on orders topic", ["service:orders"])
    script = textwrap.dedent(
        f"""
        import asyncio
        from datetime import UTC, datetime
        from pathlib import Path
        from memory.settings import MemorySettings
        from memory.embedded.bank import EmbeddedBank
        from tests.memory.fakes import CountingEmbedder, HashingEmbedder, RecordingSynthesizer

        async def main():
            bank = EmbeddedBank(MemorySettings(data_dir=Path({str(tmp_path)!r})),
                                embedder=HashingEmbedder(), synthesizer=RecordingSynthesizer())
            for n in range(3):
                await bank.retain(document_id=f"remote-{{n}}", content=f"kafka consumer lag remote {{n}}",
                                  tags=["service:orders"], metadata={{}}, timestamp=datetime.now(UTC))
            await bank.close()

        asyncio.run(main())
        """
    )
    await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script], cwd=ROOT, check=True, timeout=120)
    found = await bank.recall(
        query="kafka consumer lag", tags=["service:orders"], tags_match="any_strict", limit=10
    )
    assert {r.id for r in found} == {"local", "remote-0", "remote-1", "remote-2"}


async def test_reopening_loads_every_vector(tmp_path: Path) -> None:
    first = make_bank(tmp_path)
    for n in range(50):
        await put(
            first, f"d{n}", f"incident number {n} about service {n % 5}", [f"service:s{n % 5}"], hours=n
        )
    await first.close()
    second = make_bank(tmp_path)
    try:
        found = await second.recall(
            query="incident about service 3", tags=["service:s3"], tags_match="any_strict", limit=50
        )
        assert len(found) == 10 and all(r.tags == ["service:s3"] for r in found)
        assert len(second.index) == 50
    finally:
        await second.close()


async def test_vectors_of_another_model_are_recomputed(tmp_path: Path) -> None:
    old = make_bank(tmp_path, embedder=HashingEmbedder(dimension=64))
    await put(old, "a", "certificate expired on the ingress", ["service:edge"])
    await old.close()
    upgraded_embedder = HashingEmbedder(dimension=32)
    upgraded_embedder.model_id = "hashing-32"
    upgraded = make_bank(tmp_path, embedder=upgraded_embedder)
    try:
        assert [r.id for r in await upgraded.recall(query="certificate expired")] == ["a"]
        with sqlite3.connect(tmp_path / "memory.db") as conn:
            assert conn.execute("SELECT model_id, length(vector) FROM vectors").fetchall() == [
                ("hashing-32", 32 * 4)
            ]
    finally:
        await upgraded.close()


async def test_concurrent_retains_all_land(bank: EmbeddedBank) -> None:
    await asyncio.gather(*(put(bank, f"c{n}", f"concurrent write {n}", ["service:x"]) for n in range(25)))
    found = await bank.recall(query="concurrent write", budget="high", limit=100)
    assert len(found) == 25


async def test_recency_breaks_ties(bank: EmbeddedBank) -> None:
    await put(bank, "older", "identical text about a stuck deploy", ["service:deploy"], hours=0)
    await put(bank, "newer", "identical text about a stuck deploy", ["service:deploy"], hours=5)
    found = await bank.recall(query="identical text about a stuck deploy", limit=2)
    assert [r.id for r in found] == ["newer", "older"]  # equal similarity and BM25: the newer ranks first


async def test_rejects_what_other_drivers_would_reject(bank: EmbeddedBank) -> None:
    with pytest.raises(ValueError, match="strings"):
        await bank.retain(document_id="x", content="c", tags=[], metadata={"n": 1}, timestamp=T0)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="timezone"):
        await bank.retain(document_id="x", content="c", tags=[], metadata={}, timestamp=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="document_id"):
        await bank.retain(document_id="", content="c", tags=[], metadata={}, timestamp=T0)


async def test_failed_refresh_is_reported_on_its_operation(tmp_path: Path) -> None:
    class Broken(RecordingSynthesizer):
        async def synthesize(self, **kwargs: object):  # type: ignore[no-untyped-def, override]
            raise RuntimeError("model unavailable")

    bank = make_bank(tmp_path, synthesizer=Broken())
    try:
        op = await bank.create_mental_model(model_id="m", name="M", source_query="q")
        done = await wait_operation(bank, op)
        assert done.status == "failed" and "model unavailable" in (done.error or "")
        model = await bank.get_mental_model("m")
        assert model is not None and model.last_refreshed_at is None
        with pytest.raises(KeyError):
            await bank.refresh_mental_model("missing")
    finally:
        await bank.close()


async def test_mental_model_scope_is_every_record_its_tags_admit(tmp_path: Path) -> None:
    synthesizer = RecordingSynthesizer()
    bank = make_bank(tmp_path, synthesizer=synthesizer)
    try:
        for n in range(4):
            await put(bank, f"a{n}", f"alpha {n}", ["service:alpha"], hours=n)
        await put(bank, "b", "beta", ["service:beta"])
        op = await bank.create_mental_model(
            model_id="alpha", name="Alpha", source_query="q", tags=["service:alpha"]
        )
        assert (await wait_operation(bank, op)).status == "completed"
        assert synthesizer.calls == [("q", ["a3", "a2", "a1", "a0"])]
    finally:
        await bank.close()


def test_candidate_depth_grows_with_budget_and_limit() -> None:
    assert candidate_depth("low", 3) < candidate_depth("mid", 3) < candidate_depth("high", 3)
    assert candidate_depth("low", 100) == 300


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('host-1234 "quoted" OR NEAR(x)', '"host" OR "1234" OR "quoted" OR "near" OR "x"'),
        ("the of and", None),
        ("", None),
        ("Ünïcode café", '"unicode" OR "cafe"'),
    ],
)
def test_match_expression_quotes_every_word(query: str, expected: str | None) -> None:
    assert match_expression(query_terms(query)) == expected


def keyword_index() -> sqlite3.Connection:
    """The product's keyword index over a documents table of just what it reads."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE documents (id INTEGER PRIMARY KEY, content TEXT NOT NULL, scope TEXT NOT NULL)"
    )
    for statement in FTS:
        conn.execute(statement)
    return conn


def test_keyword_channel_keeps_the_rarest_words_within_its_budget(tmp_path: Path) -> None:
    conn = keyword_index()
    rows = [f"common frequent row {n}" + (" scarce" if n % 10 == 0 else "") for n in range(100)]
    rows.append("needle common")
    # The services' words are not the text's: "needle" as every document's scope leaves it the rarest word.
    conn.executemany("INSERT INTO documents (content, scope) VALUES (?, 'needle')", [(r,) for r in rows])
    channel = KeywordChannel(budget=20)
    assert channel.terms(conn, "needle scarce common frequent", size=len(rows)) == ["needle", "scarce"]
    assert KeywordChannel(budget=1000).terms(conn, "needle scarce common", size=len(rows)) == [
        "needle",
        "scarce",
        "common",
    ]


def reference_admits(doc_tags: set[str], wanted: list[str], match: TagsMatch) -> bool:
    """Hindsight's documented meaning of each mode, written the obvious way."""
    want = set(wanted)
    if not want:
        return True
    untagged = not doc_tags
    if match == "any":
        return untagged or bool(doc_tags & want)
    if match == "any_strict":
        return bool(doc_tags & want)
    if match == "all":
        return untagged or want <= doc_tags
    if match == "all_strict":
        return not untagged and want <= doc_tags
    return doc_tags == want


TAGS = st.sets(st.sampled_from(["service:a", "service:b", "kind:incident", "severity:high"]), max_size=4)


@settings(max_examples=60)
@given(
    docs=st.lists(TAGS, min_size=1, max_size=12),
    wanted=st.lists(
        st.sampled_from(["service:a", "service:b", "kind:incident", "severity:high"]), max_size=3
    ),
    match=st.sampled_from(["any", "any_strict", "all", "all_strict", "exact"]),
)
def test_both_channels_filter_tags_like_hindsight(
    docs: list[set[str]], wanted: list[str], match: TagsMatch
) -> None:
    expected = {n + 1 for n, tags in enumerate(docs) if reference_admits(tags, wanted, match)}
    index = VectorIndex(2)
    index.apply(
        IndexRow(id=n + 1, tags=tuple(sorted(t)), ts=0.0, vector=np.ones(2, np.float32), seq=n + 1)
        for n, t in enumerate(docs)
    )
    assert set(index.search(np.ones(2, np.float32), tags=wanted, match=match, k=100)) == expected
    assert index.admitted(wanted, match) == (expected if wanted else None)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE documents (id INTEGER PRIMARY KEY, tags TEXT)")
    conn.execute("CREATE TABLE document_tags (tag TEXT, doc INTEGER)")
    for n, tags in enumerate(docs):
        conn.execute("INSERT INTO documents VALUES (?, ?)", (n + 1, "[]" if not tags else str(sorted(tags))))
        conn.executemany("INSERT INTO document_tags VALUES (?, ?)", [(t, n + 1) for t in tags])
    cond, params = tag_condition(wanted, match)
    assert {r[0] for r in conn.execute(f"SELECT d.id FROM documents d WHERE {cond}", params)} == expected


async def test_closing_the_bank_fails_a_refresh_in_flight(tmp_path: Path) -> None:
    started = asyncio.Event()

    class Slow(RecordingSynthesizer):
        async def synthesize(self, **kwargs: object):  # type: ignore[no-untyped-def, override]
            started.set()
            await asyncio.Event().wait()  # never finishes on its own

    bank = make_bank(tmp_path, synthesizer=Slow())
    op = await bank.create_mental_model(model_id="m", name="M", source_query="q")
    await asyncio.wait_for(started.wait(), timeout=30)
    await bank.close()
    reopened = make_bank(tmp_path)
    try:
        done = await reopened.get_operation(op.id)
        assert done is not None and done.status == "failed" and "cancelled" in (done.error or "")
    finally:
        await reopened.close()


class LockingSynthesizer(RecordingSynthesizer):
    """Takes the memory file's write lock while the refresh synthesizes, as another writer would."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.holder: sqlite3.Connection | None = None

    async def synthesize(self, **kwargs: Any) -> ReflectAnswer:
        self.holder = sqlite3.connect(self.path, isolation_level=None)
        self.holder.execute("BEGIN EXCLUSIVE")
        return await super().synthesize(**kwargs)


async def test_refresh_that_cannot_save_or_record_still_ends_failed(tmp_path: Path) -> None:
    synthesizer = LockingSynthesizer(tmp_path / "memory.db")
    bank = make_bank(tmp_path, synthesizer=synthesizer, memory_timeout_s=0.2)
    try:
        assert bank.store.path == synthesizer.path
        await put(bank, "INC-1", "redis eviction storm", ["service:cache"])
        operation = await bank.create_mental_model(model_id="m", name="M", source_query="what fails?")
        await asyncio.wait_for(asyncio.gather(*bank._tasks), timeout=60)
        assert synthesizer.holder is not None
        locked = await bank.get_operation(operation.id)
        assert locked is not None and locked.status == "failed"
        assert "MemoryUnavailable" in (locked.error or "")
        synthesizer.holder.execute("ROLLBACK")
        synthesizer.holder.close()
        assert await bank.get_operation(operation.id) == locked
        reopened = make_bank(tmp_path)
        try:
            stored = await reopened.get_operation(operation.id)
            assert stored is not None and stored.status == "failed" and stored.error == locked.error
        finally:
            await reopened.close()
    finally:
        await bank.close()


async def test_items_are_embedded_when_a_record_is_retained(bank: EmbeddedBank) -> None:
    record = make_record()
    await log_incident(bank, record)
    head_text = "Raised the pool to 40"  # as the briefing head writes the step
    found = bank.item_vectors([head_text, "Checked pg_stat_activity", "Something nobody recorded"])
    assert set(found) == {head_text, "Checked pg_stat_activity"}
    assert np.allclose(found[head_text], bank.embedder.embed([head_text])[0])


def back_to_layout_3(path: Path) -> None:
    """The file as layout 3 left it: a keyword index of the text alone, no services' column."""
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "DROP TRIGGER documents_ai; DROP TRIGGER documents_ad; DROP TRIGGER documents_au;"
            "DROP TABLE documents_vocab; DROP TABLE documents_fts; ALTER TABLE documents DROP COLUMN scope;"
            "CREATE VIRTUAL TABLE documents_fts USING fts5(content, content='documents', content_rowid='id');"
            "CREATE VIRTUAL TABLE documents_vocab USING fts5vocab(documents_fts, 'row');"
            "INSERT INTO documents_fts(documents_fts) VALUES ('rebuild'); PRAGMA user_version = 3;"
        )


async def test_a_bank_without_item_vectors_is_migrated_and_backfilled(tmp_path: Path) -> None:
    old = make_bank(tmp_path)
    await log_incident(old, make_record())
    await old.close()
    back_to_layout_3(tmp_path / "memory.db")
    with sqlite3.connect(tmp_path / "memory.db") as conn:  # back to layout 2, as an older release left it
        conn.executescript(
            "DROP TABLE item_vectors; ALTER TABLE vectors DROP COLUMN items_model; PRAGMA user_version = 2;"
        )
    reopened = make_bank(tmp_path)
    try:
        assert reopened.item_vectors(["Raised the pool to 40"]) == {}  # not backfilled before it syncs
        assert [r.id for r in await reopened.recall(query="pool")] == ["INC-9"]
        assert set(reopened.item_vectors(["Raised the pool to 40"])) == {"Raised the pool to 40"}
        with sqlite3.connect(tmp_path / "memory.db") as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        await reopened.close()


async def test_a_keyword_index_without_tags_is_rebuilt_with_them(tmp_path: Path) -> None:
    """A layout-3 file (a keyword index of the text alone) opens migrated: a search within a service
    finds its record by keyword, and a record written afterwards is indexed with its service too."""
    old = make_bank(tmp_path)
    await log_incident(old, make_record())
    await old.close()
    back_to_layout_3(tmp_path / "memory.db")
    reopened = make_bank(tmp_path)
    keyword = reopened.with_channels("keyword")
    try:
        found = await keyword.recall(query="pool", tags=["service:checkout-service"], tags_match="any_strict")
        assert [r.id for r in found] == ["INC-9"]
        await log_incident(reopened, dataclasses.replace(make_record(), incident_id="INC-10", service="cart"))
        found = await keyword.recall(query="pool", tags=["service:cart"], tags_match="any_strict")
        assert [r.id for r in found] == ["INC-10"]
        with sqlite3.connect(tmp_path / "memory.db") as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        await reopened.close()


async def test_a_runbooks_lines_are_embedded_when_it_is_retained_and_older_items_are_stored_again(
    tmp_path: Path,
) -> None:
    bank = make_bank(tmp_path)
    await put(bank, "RB-db-pool", RUNBOOK, ["kind:runbook", "service:checkout-service"])
    head_text = "Pool dashboard: active == max and pending climbing"  # as the briefing head writes it
    assert set(bank.item_vectors([head_text])) == {head_text}
    await bank.close()
    with sqlite3.connect(tmp_path / "memory.db") as conn:  # items of the first version: records' only
        conn.execute("DELETE FROM item_vectors")
        conn.execute("UPDATE vectors SET items_model = ?", (HashingEmbedder.model_id,))
    reopened = make_bank(tmp_path)
    try:
        assert reopened.item_vectors([head_text]) == {}
        await reopened.recall(query="pool")  # the first read brings the bank up to date
        assert set(reopened.item_vectors([head_text])) == {head_text}
    finally:
        await reopened.close()


def make_record() -> IncidentRecord:
    return IncidentRecord(
        incident_id="INC-9",
        service="checkout-service",
        timestamp=T0,
        symptom="Checkout times out.",
        error_signature="pool timeout",
        root_cause="The pool was too small.",
        resolution_steps="Checked pg_stat_activity (on db-2); raised the pool to 40.",
        runbook_used="RB-1",
        outcome="Resolved.",
        failed_attempts="Restarting pods did not help.",
        resolved_by="dana",
    )


async def test_writing_the_same_records_again_embeds_only_what_changed(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    bank = make_bank(tmp_path, embedder=embedder)
    try:
        first = make_record()
        second = dataclasses.replace(first, incident_id="INC-2", symptom="Search returns errors.")
        await log_incidents(bank, [incident_write(first), incident_write(second)])
        before = await bank.recall(query="pool", limit=5)
        embedder.embedded.clear()
        # The same contents with new metadata: nothing embedded, the metadata still rewritten.
        await log_incidents(bank, [incident_write(first, severity="critical"), incident_write(second)])
        assert embedder.embedded == []
        assert "severity:critical" in (await bank.stored_tags(first.incident_id) or [])
        after = await bank.recall(query="pool", limit=5)
        assert [(r.id, r.score) for r in after] == [(r.id, r.score) for r in before]
        # One record changed: only its text (and its new items) is embedded.
        changed = dataclasses.replace(second, root_cause="A cron job held every connection open.")
        await log_incidents(bank, [incident_write(first), incident_write(changed)])
        assert format_record(changed) in embedder.embedded
        assert format_record(first) not in embedder.embedded
        found = await bank.recall(query="cron job held every connection open", limit=1)
        assert [r.id for r in found] == [changed.incident_id]
    finally:
        await bank.close()


async def test_a_query_asked_again_is_embedded_once_and_ranks_the_same(tmp_path: Path) -> None:
    """A briefing's scoped and cross-service recalls ask with the alert's text, an action check's two
    scopes at once: one embedding serves them all, and the kept vector cannot be changed by a caller."""
    embedder = CountingEmbedder()
    bank = make_bank(tmp_path, embedder=embedder)
    try:
        await put(bank, "a", "pool exhausted on checkout", ["service:checkout"])
        await put(bank, "b", "disk full on orders", ["service:orders"])
        embedder.embedded.clear()
        scoped, anywhere = await asyncio.gather(
            bank.recall(query="checkout pool timeout", tags=["service:checkout"], limit=5),
            bank.recall(query="checkout pool timeout", limit=5),
        )
        again = await bank.recall(query="checkout pool timeout", limit=5)
        assert embedder.embedded == ["checkout pool timeout"]
        assert [r.id for r in scoped] == ["a"] and [r.id for r in again] == [r.id for r in anywhere]
        assert not bank._query_vector("checkout pool timeout").flags.writeable
    finally:
        await bank.close()


WORDS = st.sampled_from(["pool", "timeout", "disk", "full", "dns", "lookup", "checkout", "orders"])


SCOPE_TAGS = st.sampled_from(["service:a", "service:a-b", "service:b", "kind:incident"])


@settings(max_examples=80)
@given(
    docs=st.lists(
        st.tuples(st.lists(WORDS, min_size=1, max_size=6), st.sets(SCOPE_TAGS, max_size=3)),
        min_size=1,
        max_size=15,
    ),
    query=st.lists(WORDS, min_size=1, max_size=4),
    wanted=st.lists(SCOPE_TAGS, max_size=2),
    match=st.sampled_from(["any_strict", "all_strict"]),
    k=st.integers(min_value=1, max_value=8),
)
def test_the_keyword_channel_ranks_within_the_admitted_documents_as_a_tag_filter_in_sql_does(
    docs: list[tuple[list[str], set[str]]], query: list[str], wanted: list[str], match: TagsMatch, k: int
) -> None:
    """Filtering the ranked rows by the index's admitted ids gives what testing each row's tags inside
    the query gave: the same documents, scores and order; and asking FTS5 for the tags' rows first
    (``tag_filter``) changes nothing of it."""
    conn = keyword_index()
    conn.execute("ALTER TABLE documents ADD COLUMN tags TEXT")
    conn.execute("CREATE TABLE document_tags (tag TEXT, doc INTEGER)")
    index = VectorIndex(2)
    for n, (words, tags) in enumerate(docs, start=1):
        conn.execute(
            "INSERT INTO documents (id, content, scope, tags) VALUES (?, ?, ?, ?)",
            (n, " ".join(words), scope_words(sorted(tags)), json.dumps(sorted(tags))),
        )
        conn.executemany("INSERT INTO document_tags VALUES (?, ?)", [(t, n) for t in tags])
    index.apply(
        IndexRow(id=n, tags=tuple(sorted(t)), ts=0.0, vector=np.ones(2, np.float32), seq=n)
        for n, (_, t) in enumerate(docs, start=1)
    )
    text = " ".join(query)
    admitted = index.admitted(wanted, match)
    found = KeywordChannel().scored(conn, text, admitted=admitted, k=k, size=len(docs))
    narrowed = KeywordChannel().scored(
        conn, text, admitted=admitted, k=k, size=len(docs), scope=tag_filter(wanted, match)
    )
    assert narrowed == found
    cond, params = tag_condition(wanted, match)
    expression = " OR ".join(f'"{w}"' for w in dict.fromkeys(query))
    reference = dict(
        conn.execute(
            "SELECT d.id, -f.rank FROM documents_fts AS f CROSS JOIN documents AS d ON d.id = f.rowid "
            f"WHERE documents_fts MATCH ? AND {cond}",
            [f"content : ({expression})", *params],
        ).fetchall()
    )
    assert found is not None
    # Ties may be cut either way at the k-th place: the scores, and each document's own, must agree.
    assert [score for _, score in found] == pytest.approx(sorted(reference.values(), reverse=True)[:k])
    assert all(score == pytest.approx(reference[doc]) for doc, score in found)
