"""A LangGraph `BaseStore` on Chroma: long-term memory for any LangGraph app, persistent, searchable, with TTL.

Chroma holds the items and one vector per distinct indexed text per namespace (store_collections.py); the store
also keeps its items in process by namespace (store_catalog.py), so gets, filters, pagination and namespace
listing never wait on Chroma's scanning metadata filter, and a semantic search asks Chroma's HNSW index only
about the rows under its prefix (store_reads.py). A store must be the only writer of its collections while open
(`make_store` locks its directory, as the memory backend does).

Behaviour follows InMemoryStore, the reference implementation, except where it would be wrong for a database:
reads in a batch see the store as it was before the batch's writes and the last put per (namespace, key) wins
(as there); overwriting keeps `created_at` (as PostgresStore) and replaces the item's vectors; `$gt`/`$gte`/
`$lt`/`$lte` on a missing or non-numeric field do not match (InMemoryStore raises); `list_namespaces` lists
namespaces that hold items. TTL follows SqliteStore and PostgresStore: `ttl=` minutes on put, the config's
`default_ttl`, `refresh_on_read` and `omit_expired`, `sweep_ttl()` and a sweeper thread. Concurrent async calls
are batched (store_batching.py). `ChromaStore()` without a client keeps its items in memory, seen by no other store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from chromadb.api import ClientAPI
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from amphoreus_graph.memory.chroma_index import StoreLock, open_chroma
from amphoreus_graph.memory.store_batching import AsyncBatcher, ThreadBatcher
from amphoreus_graph.memory.store_catalog import Namespace
from amphoreus_graph.memory.store_collections import StoreCollections, private_client
from amphoreus_graph.memory.store_reads import Reader
from amphoreus_graph.memory.store_ttl import TTLSweeper
from amphoreus_graph.memory.store_vectors import VectorIndex
from amphoreus_graph.memory.store_writes import Changes, expiry, plan

DEFAULT_STORE_DIR = "memory/langgraph-store"
DEFAULT_DIMS = 384  # all-MiniLM-L6-v2; known up front so a server can start before the model loads
STUDIO_TTL: TTLConfig = {"sweep_interval_minutes": 5}  # langgraph dev runs no sweeper for a custom store


@dataclass
class _Plan:
    """A batch's writes (last per item wins) and the texts and queries to embed before touching Chroma."""

    puts: dict[tuple[Namespace, str], PutOp]
    texts: dict[tuple[Namespace, str], dict[str, str]]  # item -> index path -> text
    queries: list[str]

    def documents(self) -> list[str]:
        return list(dict.fromkeys(t for paths in self.texts.values() for t in paths.values()))


class ChromaStore(BaseStore):
    """LangGraph's BaseStore on Chroma: get/put/delete, filtered and semantic search, namespace listing, TTL."""

    supports_ttl = True

    def __init__(
        self,
        client: ClientAPI | None = None,
        *,
        name: str = "langgraph-store",
        index: IndexConfig | Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        """`client`: where the store lives (default: a private in-memory one); `name`: any string, many stores may
        share a client; `index`: LangGraph's IndexConfig ("amphoreus" as `embed` is our embedder); `ttl`:
        LangGraph's TTLConfig."""
        self.client = client if client is not None else private_client(self)
        self.index_config = dict(index) if index else None
        self.ttl_config = ttl
        self._index = VectorIndex.from_config(index) if index else None
        self.embeddings = self._index.embeddings if self._index else None
        self.chroma = StoreCollections(self.client, name, self._index.space if self._index else None)
        self._catalog = self.chroma.load()
        self._lock = threading.Lock()  # one batch at a time reads and writes the catalog
        self._last_us = 0
        self._batcher = AsyncBatcher(self._abatch_now)
        self._threads = ThreadBatcher(self._batch_now)
        self._sweeper = TTLSweeper(self._sweep_expired)

    # BaseStore's two primitives: plan and embed first (async where the embedder is), then Chroma in a thread.

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Joins the batch of every other thread's call made meanwhile (store_batching.py)."""
        return self._threads.submit(list(ops))

    def _batch_now(self, ops: list[Op]) -> list[Result]:
        batch = self._plan(ops)
        vectors, queries = {}, {}
        if self._index is not None:
            texts = batch.documents()
            embed = self._index.embeddings
            vectors = dict(zip(texts, self._index.checked(embed.embed_documents(texts) if texts else []), strict=True))
            queries = {q: self._index.checked([embed.embed_query(q)])[0] for q in batch.queries}
        return self._execute(ops, batch, vectors, queries)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Joins the batch of every other async call made meanwhile on this event loop (store_batching.py)."""
        return await self._batcher.submit(list(ops))

    async def _abatch_now(self, ops: list[Op]) -> list[Result]:
        batch = self._plan(ops)
        vectors, queries = {}, {}
        if self._index is not None:
            texts = batch.documents()
            embed = self._index.embeddings
            embedded = await embed.aembed_documents(texts) if texts else []
            vectors = dict(zip(texts, self._index.checked(embedded), strict=True))
            found = await asyncio.gather(*(embed.aembed_query(q) for q in batch.queries))
            queries = dict(zip(batch.queries, self._index.checked(list(found)), strict=True))
        return await asyncio.to_thread(self._execute, ops, batch, vectors, queries)

    def _plan(self, ops: list[Op]) -> _Plan:
        puts: dict[tuple[Namespace, str], PutOp] = {}
        queries: list[str] = []
        for op in ops:
            if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)  # namespaces become "."-joined metadata: "a.b" must not alias ("a", "b")
            if isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
            elif isinstance(op, SearchOp) and op.query and self._index is not None:
                queries.append(op.query)
        texts = {item: self._index.texts(op) if self._index else {} for item, op in puts.items()}
        return _Plan(puts, texts, list(dict.fromkeys(queries)))

    def _execute(
        self, ops: list[Op], batch: _Plan, vectors: dict[str, list[float]], queries: dict[str, list[float]]
    ) -> list[Result]:
        with self._lock:
            now = self._now_us()
            omit = bool((self.ttl_config or {}).get("omit_expired"))
            reader = Reader(self._catalog, self.chroma, self._index, now, omit)
            results: list[Result] = []
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(reader.get(op))
                elif isinstance(op, SearchOp):
                    results.append(reader.search(op, queries.get(op.query or "")))
                elif isinstance(op, ListNamespacesOp):
                    results.append(reader.list_namespaces(op))
                else:
                    results.append(None)
            if reader.refreshed:
                moved = [(entry, expiry(entry.ttl_minutes, now)) for entry in reader.refreshed.values()]
                self.chroma.set_expiry([(entry, us) for entry, us in moved if us is not None])
                for entry, us in moved:
                    entry.expires_us = us
            if batch.puts:
                self._commit(plan(self._catalog, batch.puts, batch.texts, now), vectors)
            return results

    def _commit(self, changes: Changes, vectors: Mapping[str, list[float]]) -> None:
        self.chroma.write(changes, vectors)
        changes.apply(self._catalog)

    def _now_us(self) -> int:
        """UTC epoch microseconds, strictly increasing from batch to batch."""
        self._last_us = max(time.time_ns() // 1000, self._last_us + 1)
        return self._last_us

    # TTL, as SqliteStore and PostgresStore name it

    def sweep_ttl(self) -> int:
        """Delete every expired item now; returns how many."""
        return self._sweep_expired()

    def _sweep_expired(self) -> int:
        with self._lock:
            now = self._now_us()
            expired = [f for f in self._catalog.expiring() if f.entry.expired(now)]
            gone = {(f.namespace, f.key): PutOp(f.namespace, f.key, None) for f in expired}
            if gone:
                self._commit(plan(self._catalog, gone, {}, now), {})
            return len(gone)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep expired items on a background thread every `sweep_interval_minutes` (default: the TTL config's,
        else 5). Returns a `concurrent.futures.Future`: cancel it, or call `stop_ttl_sweeper`, to stop."""
        return self._sweeper.start(self.ttl_config, sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return self._sweeper.stop(timeout)


def make_store() -> ChromaStore:
    """`langgraph dev`'s long-term store: embedded Chroma in $AMPHOREUS_STORE_DIR (default memory/langgraph-store),
    sweeping items put with a `ttl` every 5 minutes (none expires unless put with one).

    One store (and one directory lock) per process and directory: langgraph-api calls the factory once per
    thread, and a second lock on the same directory from the same process would fail.
    """
    directory = Path(os.environ.get("AMPHOREUS_STORE_DIR") or DEFAULT_STORE_DIR).resolve()
    return _persistent_store(directory)[0]


@cache
def _persistent_store(directory: Path) -> tuple[ChromaStore, StoreLock | None]:
    client, lock = open_chroma(directory)
    store = ChromaStore(client, index={"dims": DEFAULT_DIMS, "embed": "amphoreus", "fields": ["$"]}, ttl=STUDIO_TTL)
    store.start_ttl_sweeper()
    return store, lock
