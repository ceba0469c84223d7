"""The Hindsight driver: the company bank on a Hindsight server, through ``hindsight-client``'s async calls.

For teams that outgrow one machine. Behaviour matches the embedded driver:

- **First write** creates the bank (if the server has none by that id) with its mission, directives and
  dispositions, and first use makes sure the server keeps document text, which recall returns. A read
  of a bank the server does not have answers as an empty bank would (no incidents, no tags, no mental
  model) and leaves none behind: an operator checking a wrong bank name must not create it.
- **Retain** upserts by ``document_id`` (the incident id), with tags, string metadata, the incident's
  timestamp and context. ``append`` adds to the document; its tags are united with the document's
  and newer metadata wins, as on the embedded driver.
- **Export** pages through the server's document listing for the ids and reads each document with
  its retain parameters (the timestamp is the retained ``event_date``), never creating the bank.
- **Recall** over-fetches facts, groups them by document and returns ``limit`` incidents, each with
  the full stored record. Scoping by service is the caller's ``tags_match="any_strict"``.
- **Errors**: every client error, refused connection and timeout becomes ``MemoryUnavailable``; each
  public call is bounded as a whole by ``memory_timeout_s``. ``health`` never raises.
- **Event loops**: one client per running loop, because an HTTP session belongs to the loop that
  opened it and the web app and the worker thread each run their own.
"""

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import aiohttp
import numpy as np
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException
from pydantic import ValidationError

from memory.bank import (
    BankConfig,
    Budget,
    DocumentWrite,
    Health,
    MemoryBank,
    MemoryUnavailable,
    MentalModel,
    Operation,
    RecalledIncident,
    ReflectAnswer,
    TagsMatch,
    UpdateMode,
    check_retain,
)
from memory.config import default_bank_config
from memory.hindsight_config import apply_config, read_config
from memory.hindsight_results import (
    based_on_documents,
    channel_ranks,
    error_detail,
    group_by_document,
    parse_time,
    to_incident,
    to_mental_model,
    to_operation,
    to_write,
)
from memory.schema import bank_id
from memory.settings import MemorySettings

REFRESH_TRIGGER = {"refresh_after_consolidation": True}
RAW_FACTS = ["world", "experience"]  # observations are syntheses with no document to group by
FACT_TOKENS_PER_INCIDENT = 1500  # over-fetch: an incident's record can be split into several facts
MIN_FACT_TOKENS = 4096
MAX_FACT_TOKENS = 32768
LIST_PAGE = 500  # document ids asked per listing call


class HindsightBank(MemoryBank):
    driver = "hindsight"

    def __init__(
        self,
        settings: MemorySettings,
        *,
        connect: Callable[[], Hindsight] | None = None,
        initial_config: BankConfig | None = None,
        read_only: bool = False,
    ) -> None:
        """``read_only`` opens a bank only to be read (the source of a copy): one the server does not
        have is ``MemoryUnavailable`` saying so, not created, and an existing one's configuration is
        left as it is."""
        self.settings = settings
        self.read_only = read_only
        self.bank_id = bank_id(settings)
        self.timeout_s = settings.memory_timeout_s
        self._connect = connect or partial(
            Hindsight,
            base_url=settings.hindsight_base_url,
            api_key=settings.hindsight_api_key,
            timeout=self.timeout_s,
            max_attempts=1,  # retries belong to callers (the outbox), within their own deadlines
        )
        self.initial_config = initial_config or default_bank_config()
        self._ready = False
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def client(self) -> Hindsight:
        """This event loop's client: its HTTP session belongs to one loop, and the worker runs another."""
        return self._state().client

    def _state(self) -> "_LoopState":
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _LoopState(self._connect(), asyncio.Lock())
        return state

    # ----- plumbing -----

    @asynccontextmanager
    async def _guard(self, what: str) -> AsyncIterator[None]:
        """Bound the block by the memory timeout and turn every transport or API failure into one error."""
        try:
            async with asyncio.timeout(self.timeout_s):
                yield
        except TimeoutError as exc:
            raise MemoryUnavailable(f"hindsight {what}: no answer within {self.timeout_s:g}s") from exc
        except ApiException as exc:
            raise MemoryUnavailable(f"hindsight {what}: HTTP {exc.status} {error_detail(exc.body)}") from exc
        except aiohttp.ClientResponseError as exc:
            raise MemoryUnavailable(f"hindsight {what}: HTTP {exc.status} {exc.message}") from exc
        except (aiohttp.ClientError, OSError, ValidationError) as exc:
            raise MemoryUnavailable(f"hindsight {what}: {type(exc).__name__}: {exc}") from exc

    async def _ensure_bank(self, *, create: bool = True) -> bool:
        """Whether the bank is there, once opened: created and configured on first use when ``create``
        (a write; unless ``read_only``), else False for one the server does not have (a read, asked again
        next time); an existing bank keeps the operator's settings."""
        if self._ready:
            return True
        async with self._state().ready_lock:
            if self._ready:
                return True
            async with self._guard("open bank"):
                try:
                    current = await self.client.aget_bank_config(self.bank_id)
                except aiohttp.ClientResponseError as exc:
                    if exc.status != 404:
                        raise
                    if self.read_only:
                        raise MemoryUnavailable(f"the server has no bank {self.bank_id!r}") from None
                    if not create:
                        return False
                    await self.client.acreate_bank(self.bank_id)
                    await apply_config(self.client, self.bank_id, self.initial_config)
                    current = await self.client.aget_bank_config(self.bank_id)
                if not self.read_only and not current.get("config", {}).get("store_document_text", False):
                    await self.client.aupdate_bank_config(self.bank_id, store_document_text=True)
            self._ready = True
        return True

    async def _document(self, document_id: str) -> Any | None:
        try:
            return await self.client.documents.get_document(
                self.bank_id, document_id, _request_timeout=self.timeout_s
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

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
        await self._ensure_bank()
        tags = list(dict.fromkeys(tags))
        async with self._guard("retain"):
            if update_mode == "append":
                existing = await self._document(document_id)
                if existing is not None:
                    tags = list(dict.fromkeys([*(existing.tags or []), *tags]))
                    previous = {k: str(v) for k, v in (existing.document_metadata or {}).items()}
                    metadata = {**previous, **metadata}
            await self.client.aretain(
                self.bank_id,
                content,
                timestamp=timestamp,
                context=context,
                document_id=document_id,
                metadata=metadata,
                tags=tags,
                update_mode=update_mode,
            )

    def item_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """None: the server keeps no vectors of record items, so a briefing embeds its items itself."""
        return {}

    # ----- reads -----

    async def recall(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        budget: Budget = "mid",
        limit: int = 5,
    ) -> list[RecalledIncident]:
        if limit <= 0 or not await self._ensure_bank(create=False):
            return []
        async with self._guard("recall"):
            response = await self.client.arecall(
                self.bank_id,
                query,
                types=RAW_FACTS,
                budget=budget,
                max_tokens=min(MAX_FACT_TOKENS, max(MIN_FACT_TOKENS, limit * FACT_TOKENS_PER_INCIDENT)),
                tags=tags or None,
                tags_match=tags_match,
            )
            ranked = group_by_document(response.results)
            groups = ranked[:limit]
            documents = await asyncio.gather(*(self._document(g.document_id) for g in groups))
        why = channel_ranks(ranked)  # ranks among every incident the channel found, not just those kept
        return [to_incident(g, d, why[g.document_id]) for g, d in zip(groups, documents, strict=True)]

    async def stored_tags(self, document_id: str) -> list[str] | None:
        if not await self._ensure_bank(create=False):
            return None
        async with self._guard("read a document"):
            document = await self._document(document_id)
        return None if document is None else list(document.tags or [])

    async def document_ids(self) -> list[str]:
        """Every id the listing gives, page by page; a bank the server does not have holds none."""
        ids: set[str] = set()
        while True:
            async with self._guard("list documents"):
                try:
                    page = await self.client.documents.list_documents(
                        self.bank_id, limit=LIST_PAGE, offset=len(ids), _request_timeout=self.timeout_s
                    )
                except ApiException as exc:
                    if exc.status == 404:
                        return []
                    raise
            ids.update(item.id for item in page.items)
            if not page.items or len(ids) >= page.total:
                return sorted(ids)

    async def document(self, document_id: str) -> DocumentWrite | None:
        async with self._guard("read a document"):
            document = await self._document(document_id)
        return None if document is None else to_write(document)

    async def reflect(
        self,
        *,
        query: str,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        response_schema: dict[str, Any] | None = None,
    ) -> ReflectAnswer:
        if not await self._ensure_bank(create=False):
            return ReflectAnswer(text="")  # nothing to synthesize from
        async with self._guard("reflect"):
            answer = await self.client.areflect(
                self.bank_id,
                query,
                response_schema=response_schema,
                tags=tags or None,
                tags_match=tags_match,
                include_facts=True,
            )
        memories = answer.based_on.memories if answer.based_on is not None else None
        return ReflectAnswer(
            text=answer.text,
            structured=answer.structured_output if response_schema is not None else None,
            based_on=based_on_documents(memories),
        )

    # ----- mental models -----

    async def create_mental_model(
        self, *, model_id: str, name: str, source_query: str, tags: list[str] | None = None
    ) -> Operation:
        """Create (or, if it exists, update) the model; it refreshes itself after each consolidation."""
        await self._ensure_bank()
        async with self._guard("create mental model"):
            try:
                created = await self.client.acreate_mental_model(
                    self.bank_id, name, source_query, tags=tags, trigger=REFRESH_TRIGGER, id=model_id
                )
            except ApiException as exc:
                if exc.status != 409:
                    raise
            else:
                return Operation(
                    id=created.operation_id, status="pending", kind="refresh_mental_model", target=model_id
                )
            await self.client.aupdate_mental_model(
                self.bank_id,
                model_id,
                name=name,
                source_query=source_query,
                tags=tags,
                trigger=REFRESH_TRIGGER,
            )
        return await self.refresh_mental_model(model_id)

    async def get_mental_model(self, model_id: str) -> MentalModel | None:
        if not await self._ensure_bank(create=False):
            return None
        async with self._guard("get mental model"):
            try:
                model = await self.client.aget_mental_model(self.bank_id, model_id, detail="content")
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise
        return to_mental_model(model)

    async def list_mental_models(self) -> list[MentalModel]:
        if not await self._ensure_bank(create=False):
            return []
        async with self._guard("list mental models"):
            listed = await self.client.alist_mental_models(
                self.bank_id, detail="content", exclude_knowledge_pages=True
            )
        return [to_mental_model(m) for m in listed.items]

    async def refresh_mental_model(self, model_id: str) -> Operation:
        """Start a refresh and return at once; poll ``get_operation`` for its end."""
        if not await self._ensure_bank(create=False):
            raise KeyError(f"no mental model {model_id!r}")
        async with self._guard("refresh mental model"):
            try:
                started = await self.client.arefresh_mental_model(self.bank_id, model_id)
            except ApiException as exc:
                if exc.status == 404:
                    raise KeyError(f"no mental model {model_id!r}") from exc
                raise
        return Operation(
            id=started.operation_id, status="pending", kind="refresh_mental_model", target=model_id
        )

    async def get_operation(self, operation_id: str) -> Operation | None:
        if not await self._ensure_bank(create=False):
            return None
        async with self._guard("get operation"):
            try:
                status = await self.client.operations.get_operation_status(
                    self.bank_id, operation_id, _request_timeout=self.timeout_s
                )
            except ApiException as exc:
                if exc.status in (400, 404):  # 400: not even an operation id
                    return None
                raise
        return to_operation(status)

    # ----- configuration and health -----

    async def configure(self, config: BankConfig) -> None:
        await self._ensure_bank()
        async with self._guard("configure"):
            await apply_config(self.client, self.bank_id, config)

    async def get_config(self) -> BankConfig:
        """The bank's configuration; for one the server does not have yet, the one its first write
        creates it with."""
        if not await self._ensure_bank(create=False):
            return self.initial_config
        async with self._guard("get config"):
            return await read_config(self.client, self.bank_id)

    async def health(self) -> Health:
        try:
            async with self._guard("health"):
                await self.client.monitoring.health_endpoint_health_get(_request_timeout=self.timeout_s)
                try:
                    stats = await self.client.banks.get_agent_stats(
                        self.bank_id, _request_timeout=self.timeout_s
                    )
                except ApiException as exc:
                    if exc.status != 404:
                        raise
                    stats = None
        except MemoryUnavailable as exc:
            # the server it asked first: a replica given the wrong URL or key is told apart at a glance
            detail = f"{self.settings.hindsight_base_url}: {str(exc).strip()}"
            return Health(ok=False, driver=self.driver, detail=detail)
        pending = f", {stats.pending_operations} pending operations" if stats is not None else ", no bank yet"
        return Health(
            ok=True,
            driver=self.driver,
            detail=f"{self.settings.hindsight_base_url} bank {self.bank_id}{pending}",
            documents=stats.total_documents if stats is not None else 0,
            last_memory_seen_at=parse_time(stats.last_memory_write_at) if stats is not None else None,
        )

    async def release_loop(self) -> None:
        """Close this loop's client only; the next call on this loop would open a new one."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.aclose()

    async def close(self) -> None:
        """Close this loop's client; clients of other loops still running are closed on their own loop."""
        current = asyncio.get_running_loop()
        states, self._loops = list(self._loops.items()), weakref.WeakKeyDictionary()
        for loop, state in states:
            if loop is current:
                await state.client.aclose()
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(state.client.aclose(), loop)


@dataclass
class _LoopState:
    client: Hindsight
    ready_lock: asyncio.Lock
