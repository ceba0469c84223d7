"""The embedded driver: one SQLite file, BM25 and cosine similarity fused by reciprocal rank.

Safe for the web app, the worker and the CLI at once: SQLite (WAL, busy timeout) serialises writes
across processes, a lock guards the in-memory matrix within one, and before every search the index
catches up with any document another connection wrote (each write bumps a ``seq`` counter, so
catching up loads only what changed). Blocking work runs in threads so the event loop never waits.
"""

import asyncio
import contextlib
import copy
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import lru_cache, partial
from typing import Any, TypeVar

import numpy as np
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from memory.bank import (
    BankConfig,
    Budget,
    DocumentWrite,
    Health,
    MemoryBank,
    MemoryUnavailable,
    MentalModel,
    Operation,
    OperationStatus,
    RecalledIncident,
    ReflectAnswer,
    TagsMatch,
    UpdateMode,
    check_retain,
)
from memory.embedded import items as item_vectors
from memory.embedded import models
from memory.embedded.documents import fetch_by_document_id, fetch_by_ids, recalled, upsert_document
from memory.embedded.index import VectorIndex
from memory.embedded.search import KeywordChannel, candidate_depth, fuse, tag_condition, tag_filter
from memory.embedded.store import (
    DOCUMENT_COLUMNS,
    Draft,
    Store,
    from_epoch,
    row_to_document,
)
from memory.embedded.sync import catch_up
from memory.embedder import Embedder
from memory.items import item_key
from memory.settings import MemorySettings
from memory.synthesis import Synthesizer

T = TypeVar("T")
REFLECT_DEPTH = 20
MODEL_SCOPE_LIMIT = 500
ORPHANED_OPERATION_S = 3600.0
# Recording a refresh's end retries a locked file this many times (backoff between tries) before the
# outcome is kept in memory instead.
RECORD_ATTEMPTS = 4
CHANNELS = ("semantic", "keyword")
QUERY_VECTORS = 256  # recent recall queries whose vectors are kept


class EmbeddedBank(MemoryBank):
    driver = "embedded"

    def __init__(self, settings: MemorySettings, *, embedder: Embedder, synthesizer: Synthesizer) -> None:
        self.settings = settings
        self.bank_id = settings.bank_id
        self.embedder = embedder
        self.synthesizer = synthesizer
        self.store = Store(settings.embedded_path, timeout_s=settings.memory_timeout_s)
        self.index = VectorIndex(embedder.dimension)
        self.keywords = KeywordChannel()
        self._tasks: set[asyncio.Task[None]] = set()
        self._swept = False
        # Ends of operations the file refused to record: reported by ``get_operation`` until written.
        self._unrecorded: dict[str, Operation] = {}
        self.channels: tuple[str, ...] = CHANNELS
        # A briefing's scoped and cross-service recalls, an action check's two scopes (asked at once) and
        # an alert that fires again all ask with the same text: its vector is computed once (read-only,
        # shared). Queries are embedded one at a time, so one asked twice at once waits for the first;
        # the model already spreads each over the cores.
        self._cached_query_vector = lru_cache(maxsize=QUERY_VECTORS)(self._embed_query)
        self._query_lock = threading.Lock()
        self._keyword_search = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-keyword")

    @property
    def ranking_model(self) -> str:
        return f"{self.driver}:{self.embedder.model_id}"

    def with_channels(self, *channels: str) -> "EmbeddedBank":
        """The same bank ranking with only some channels: the single-channel baselines of the benchmark.

        The view shares the store and the index, so recall takes exactly the product's path; close the
        bank it came from, not the view.
        """
        if not channels or set(channels) - set(CHANNELS):
            raise ValueError(f"channels must be among {', '.join(CHANNELS)}")
        view = copy.copy(self)
        view.channels = tuple(dict.fromkeys(channels))
        return view

    async def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self.store.run, work)

    # ----- writes -----

    async def retain(
        self,
        *,
        document_id: str,
        content: str,
        tags: list[str],
        metadata: dict[str, str],
        timestamp: datetime,
        context: str | None = None,
        update_mode: UpdateMode = "replace",
    ) -> None:
        check_retain(document_id=document_id, timestamp=timestamp, metadata=metadata)
        draft = Draft(document_id, content, list(dict.fromkeys(tags)), dict(metadata), timestamp, context)
        await asyncio.to_thread(self._retain_sync, draft, update_mode)

    def _retain_sync(self, draft: Draft, update_mode: UpdateMode) -> None:
        appending = update_mode == "append"
        while True:
            base = (
                self.store.run(partial(fetch_by_document_id, document_id=draft.document_id))
                if appending
                else None
            )
            final = draft.appended_to(base) if base is not None else draft
            vectors, items = self.store.run(
                partial(item_vectors.embed_with_items, embedder=self.embedder, contents=[final.content])
            )
            written = self.store.run(
                partial(
                    _write,
                    draft=final,
                    vector=vectors[0],
                    items=items,
                    model_id=self.embedder.model_id,
                    expect_seq=base.seq if base is not None else None,
                    check=appending,
                )
            )
            if written:
                break
        self._sync()

    async def retain_many(self, writes: Sequence[DocumentWrite]) -> None:
        """Embed every text of the call in batches across documents, then store them in one transaction."""
        for write in writes:
            check_retain(document_id=write.document_id, timestamp=write.timestamp, metadata=write.metadata)
        drafts = [
            Draft(
                w.document_id,
                w.content,
                list(dict.fromkeys(w.tags)),
                dict(w.metadata),
                w.timestamp,
                w.context,
            )
            for w in writes
        ]
        if drafts:
            await asyncio.to_thread(self._retain_many_sync, drafts)

    def _retain_many_sync(self, drafts: list[Draft]) -> None:
        """A document stored with the same content (a re-import) keeps its vectors: only what changed
        is embedded, so running an import again costs its writes, not its embeddings."""
        keys = [(d.document_id, d.content) for d in drafts]
        model_id = self.embedder.model_id

        def embed(
            conn: sqlite3.Connection,
        ) -> tuple[dict[tuple[str, str], np.ndarray], dict[str, np.ndarray]]:
            known = item_vectors.unchanged(conn, keys, model_id)
            fresh = list(dict.fromkeys(key for key in keys if key not in known))
            vectors, items = item_vectors.embed_with_items(
                conn, self.embedder, [content for _, content in fresh]
            )
            return known | dict(zip(fresh, vectors, strict=True)), items

        vectors, items = self.store.run(embed)
        self._store_embedded([(draft, vectors[key]) for draft, key in zip(drafts, keys, strict=True)], items)
        self._sync()

    async def retain_embedded(
        self, documents: list[tuple[Draft, np.ndarray]], items: dict[str, np.ndarray]
    ) -> None:
        """Replace-mode retain of documents whose vectors, and their items' (by ``item_key``), are
        already computed, in one transaction.

        For benchmarks that build a large bank from a few distinct vectors.
        """
        await asyncio.to_thread(self._store_embedded, documents, items)
        await asyncio.to_thread(self._sync)

    def item_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these texts, for those that are items of a retained record.

        One indexed read; a busy or unreadable file answers nothing (the caller embeds instead).
        """
        keys = {text: item_key(text) for text in texts}
        try:
            found = self.store.run(lambda c: item_vectors.stored(c, keys.values(), self.embedder.model_id))
        except MemoryUnavailable:
            return {}
        return {text: found[key] for text, key in keys.items() if key in found}

    def _store_embedded(
        self, documents: list[tuple[Draft, np.ndarray]], items: dict[str, np.ndarray]
    ) -> None:
        model_id = self.embedder.model_id

        def write(conn: sqlite3.Connection) -> None:
            with Store.write(conn):
                for n, (draft, vector) in enumerate(documents):
                    # The new items go in with the first document; the rest find them stored.
                    fresh = items if n == 0 else {}
                    upsert_document(conn, draft=draft, vector=vector, model_id=model_id, items=fresh)

        self.store.run(write)

    # ----- reads -----

    def _sync(self) -> None:
        self.store.run(partial(catch_up, index=self.index, embedder=self.embedder))

    def _query_vector(self, query: str) -> np.ndarray:
        with self._query_lock:
            return self._cached_query_vector(query)

    def _embed_query(self, query: str) -> np.ndarray:
        vector: np.ndarray = self.embedder.embed([query])[0]
        vector.flags.writeable = False
        return vector

    async def recall(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        limit: int = 5,
    ) -> list[RecalledIncident]:
        return await asyncio.to_thread(self._recall_sync, query, tags, tags_match, budget, limit)

    def _recall_sync(
        self, query: str, tags: list[str] | None, tags_match: TagsMatch, budget: Budget, limit: int
    ) -> list[RecalledIncident]:
        if limit <= 0:
            return []
        self._sync()
        depth = candidate_depth(budget, limit)
        channels: dict[str, list[int]] = {}
        # The keyword search runs on its own thread while this one embeds the query: the model releases
        # the interpreter for most of its milliseconds and leaves a core idle between its operators.
        keyword = (
            self._keyword_search.submit(self._keyword_channel, query, tags, tags_match, depth)
            if "keyword" in self.channels
            else None
        )
        if "semantic" in self.channels:
            vector = self._query_vector(query)
            channels["semantic"] = self.index.search(vector, tags=tags, match=tags_match, k=depth)
        found = keyword.result() if keyword is not None else None
        if found is not None:
            channels["keyword"] = [d for d, _ in found]
        candidates = {d for ids in channels.values() for d in ids}
        fused = fuse(channels, self.index.timestamps(candidates), limit)
        documents = self.store.run(lambda c: fetch_by_ids(c, [f.id for f in fused]))
        return [recalled(documents[f.id], f.score, f.ranks) for f in fused if f.id in documents]

    def _keyword_channel(
        self, query: str, tags: list[str] | None, tags_match: TagsMatch, depth: int
    ) -> list[tuple[int, float]] | None:
        """BM25 over the records the tags admit, best first; None when the query has no words to match."""
        admitted = self.index.admitted(tags, tags_match)
        narrow = tag_filter(tags, tags_match)
        return self.store.run(
            lambda c: self.keywords.scored(
                c, query, admitted=admitted, k=depth, size=len(self.index), scope=narrow
            )
        )

    async def keyword_scored(
        self, query: str, *, tags: list[str] | None, limit: int
    ) -> list[tuple[RecalledIncident, float]]:
        """The keyword channel alone with its BM25 scores, best first (the BM25 baseline of the replay)."""

        def run() -> list[tuple[RecalledIncident, float]]:
            self._sync()
            found = self._keyword_channel(query, tags, "any_strict", limit)
            if not found:
                return []
            documents = self.store.run(lambda c: fetch_by_ids(c, [d for d, _ in found]))
            return [
                (recalled(documents[d], score, {"keyword": rank}), score)
                for rank, (d, score) in enumerate(found, start=1)
                if d in documents
            ]

        return await asyncio.to_thread(run)

    def _scope_sync(self, tags: list[str]) -> list[RecalledIncident]:
        """A mental model's evidence: every record its tags admit, newest first (not a similarity pick)."""
        cond, params = tag_condition(tags, "all_strict")
        documents = self.store.run(
            lambda c: [
                row_to_document(r)
                for r in c.execute(
                    f"SELECT {DOCUMENT_COLUMNS} FROM documents AS d WHERE {cond} ORDER BY d.ts DESC LIMIT ?",
                    [*params, MODEL_SCOPE_LIMIT],
                )
            ]
        )
        return [recalled(doc, 1.0, {"recency": n}) for n, doc in enumerate(documents, start=1)]

    async def stored_tags(self, document_id: str) -> list[str] | None:
        document = await self.document(document_id)
        return None if document is None else list(document.tags)

    async def document_ids(self) -> list[str]:
        return await self._call(
            lambda c: [row[0] for row in c.execute("SELECT document_id FROM documents ORDER BY document_id")]
        )

    async def document(self, document_id: str) -> DocumentWrite | None:
        stored = await self._call(partial(fetch_by_document_id, document_id=document_id))
        return None if stored is None else stored.as_write()

    async def reflect(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        incidents = await self.recall(
            query=query, tags=tags, tags_match=tags_match, budget="high", limit=REFLECT_DEPTH
        )
        return await self.synthesizer.synthesize(
            query=query, incidents=incidents, response_schema=response_schema
        )

    # ----- mental models -----

    async def create_mental_model(
        self, *, model_id: str, name: str, source_query: str, tags: list[str] | None = None
    ) -> Operation:
        await self._call(
            lambda c: models.upsert_model(
                c, model_id=model_id, name=name, source_query=source_query, tags=tags or []
            )
        )
        return await self.refresh_mental_model(model_id)

    async def get_mental_model(self, model_id: str) -> MentalModel | None:
        return await self._call(lambda c: models.get_model(c, model_id))

    async def list_mental_models(self) -> list[MentalModel]:
        return await self._call(models.list_models)

    async def refresh_mental_model(self, model_id: str) -> Operation:
        """Start a refresh and return at once; poll ``get_operation`` for its end."""
        model = await self.get_mental_model(model_id)
        if model is None:
            raise KeyError(f"no mental model {model_id!r}")
        await self._sweep_orphans()
        operation = await self._call(
            lambda c: models.new_operation(c, kind="refresh_mental_model", target=model_id)
        )
        task = asyncio.get_running_loop().create_task(self._refresh(operation.id, model))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return operation

    async def _refresh(self, op_id: str, model: MentalModel) -> None:
        try:
            await self._call(lambda c: models.set_operation(c, op_id, "running"))
            incidents = await asyncio.to_thread(self._scope_sync, model.tags)
            answer = await self.synthesizer.synthesize(query=model.source_query, incidents=incidents)
            await self._call(
                lambda c: models.store_model_content(
                    c, model.id, content=answer.text, structured=answer.structured
                )
            )
        except asyncio.CancelledError:
            message = "cancelled: the bank was closed before the refresh finished"
            await self._finish(op_id, model.id, "failed", message, attempts=1)
            raise
        except Exception as exc:  # a failed refresh is reported on its operation, not lost in a task
            await self._finish(op_id, model.id, "failed", f"{type(exc).__name__}: {exc}")
        else:
            await self._finish(op_id, model.id, "completed")

    async def _finish(
        self,
        op_id: str,
        target: str,
        status: OperationStatus,
        message: str | None = None,
        *,
        attempts: int = RECORD_ATTEMPTS,
    ) -> None:
        """Record the operation's end, retrying a busy file; if it stays busy, keep the end here.

        Without this a refresh whose save hit a locked file would read "running" until some later
        process swept orphans, and every poller would wait on it.
        """
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(MemoryUnavailable),
                stop=stop_after_attempt(attempts),
                wait=wait_exponential(multiplier=0.25, max=4.0),
                reraise=True,
            ):
                with attempt:
                    await self._call(lambda c: models.set_operation(c, op_id, status, message))
        except MemoryUnavailable:
            self._unrecorded[op_id] = Operation(
                id=op_id,
                status=status,
                kind="refresh_mental_model",
                target=target,
                error=message,
                finished_at=models.utcnow(),
            )

    async def _sweep_orphans(self) -> None:
        if not self._swept:
            await self._call(lambda c: models.fail_orphaned_operations(c, older_than_s=ORPHANED_OPERATION_S))
            self._swept = True

    async def get_operation(self, operation_id: str) -> Operation | None:
        """The operation as stored, or its end as known here when the file could not take it yet.

        An end kept in memory is written on the way once the file accepts it.
        """
        unrecorded = self._unrecorded.get(operation_id)
        if unrecorded is not None:
            with contextlib.suppress(MemoryUnavailable):
                await self._call(
                    lambda c: models.set_operation(c, operation_id, unrecorded.status, unrecorded.error)
                )
                del self._unrecorded[operation_id]
            return unrecorded
        return await self._call(lambda c: models.get_operation(c, operation_id))

    # ----- configuration and health -----

    async def configure(self, config: BankConfig) -> None:
        await self._call(lambda c: models.save_config(c, self.bank_id, config))

    async def get_config(self) -> BankConfig:
        return await self._call(lambda c: models.load_config(c, self.bank_id))

    async def health(self) -> Health:
        try:
            count, last = await self._call(
                lambda c: c.execute("SELECT count(*), max(updated_at) FROM documents").fetchone()
            )
        except MemoryUnavailable as exc:
            return Health(ok=False, driver=self.driver, detail=str(exc))
        return Health(
            ok=True,
            driver=self.driver,
            detail=f"{self.store.path.name}, model {self.embedder.model_id}",
            documents=count,
            last_memory_seen_at=from_epoch(last) if last is not None else None,
        )

    async def release_loop(self) -> None:
        """Nothing is bound to a loop: the store's connections are per thread and closed by ``close``."""

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._keyword_search.shutdown(wait=True)
        self.store.close()


def _write(
    conn: sqlite3.Connection,
    *,
    draft: Draft,
    vector: np.ndarray,
    items: dict[str, np.ndarray],
    model_id: str,
    expect_seq: int | None,
    check: bool,
) -> bool:
    """Upsert by document_id; with ``check``, only if nobody wrote the document since it was read."""
    with Store.write(conn):
        if check:
            current = fetch_by_document_id(conn, document_id=draft.document_id)
            if (current.seq if current else None) != expect_seq:
                return False
        upsert_document(conn, draft=draft, vector=vector, model_id=model_id, items=items)
    return True
