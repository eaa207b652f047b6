"""A LangGraph `BaseStore` on Chroma: long-term memory for any LangGraph app, persistent and searchable.

One store is two Chroma collections, always written with explicit vectors (never Chroma's default embedder):

- `<collection>`: one record per item. id = sha256 of (namespace, key); document = the value as JSON; metadata =
  `ns` (labels joined by "."; BaseStore forbids "." in labels), `key`, `depth`, `ns0…nsN` (one label per level,
  so a namespace prefix is an equality filter Chroma can evaluate), `created_us`/`updated_us` (UTC epoch
  microseconds), `vectors` (how many index texts the item has) and `rows` (the ids of the rows holding them, as
  JSON). Chroma wants a vector on every record, so items carry a 4-dim placeholder derived from their id: never
  zero, never searched.
- `<collection>.vectors`: one row per distinct indexed text per namespace, with the real embedding; id = sha256 of
  (namespace, text), metadata = `ns0…nsN` and `items`, the JSON list of [item id, index path] filed under that
  text (each field path, and each element of a `[*]` path, as InMemoryStore names them: `path` or `path.i`).
  Many identical vectors degrade Chroma's HNSW index (a search for a distinct text returned a duplicate and left
  the exact match out; a limit of 1,000 over 201 items returned 107), so a text is indexed once however many
  items hold it. A query ranks rows with Chroma's HNSW index (cosine) and max-pools per item, so an item scores as
  its best-matching field; when Chroma answers with fewer rows than asked, every row under the prefix is ranked
  exactly instead, so "fewer than asked" always means "all there is".

Behaviour follows InMemoryStore, the reference implementation, except where it would be wrong for a database:
reads in a batch see the store as it was before the batch's writes and the last put per (namespace, key) wins
(as there); overwriting keeps `created_at` (as PostgresStore; InMemoryStore resets it) and replaces the item's
vectors; filter-only search orders by `updated_at`, newest first; with a query, scored items come first and
items without vectors follow with `score=None`, paginated as one list; `$gt`/`$gte`/`$lt`/`$lte` on a missing or
non-numeric field do not match (InMemoryStore raises); `list_namespaces` lists namespaces that hold items.
Value filters run in Python after Chroma fetches the namespace prefix, so a search costs O(items under the
prefix); `list_namespaces` scans item metadata. No TTL: `supports_ttl = False`, and `put(..., ttl=N)` raises.
A store written before text rows (its vectors in `<collection>-vectors`, one per item and path) is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_index import StoreLock, describe_store, open_chroma, placeholder_vector
from amphoreus_graph.memory.embedder import Embedder, default_embedder
from amphoreus_graph.memory.store_filters import namespace_matches, value_matches

DEFAULT_STORE_DIR = "memory/langgraph-store"
DEFAULT_DIMS = 384  # all-MiniLM-L6-v2; known up front so a server can start before the model loads
VECTORS_SUFFIX = ".vectors"  # a store's text rows live in `<collection>.vectors`
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
Namespace = tuple[str, ...]
Where = dict[str, Any]


class EmbedderEmbeddings(Embeddings):
    """LangChain `Embeddings` over our `Embedder`; the default one loads on first use, not at server start."""

    def __init__(self, embedder: Embedder | Callable[[], Embedder] = default_embedder) -> None:
        self._embedder = embedder

    def _get(self) -> Embedder:
        if not isinstance(self._embedder, Embedder):
            self._embedder = self._embedder()
        return self._embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return cast(list[list[float]], self._get().encode(list(texts)).tolist())

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def resolve_embeddings(embed: Any) -> Embeddings:
    """IndexConfig's `embed`: "amphoreus" (our default embedder), an `Embedder`, or what LangGraph accepts."""
    if embed == "amphoreus":
        return EmbedderEmbeddings()
    if isinstance(embed, Embedder):
        return EmbedderEmbeddings(embed)
    return ensure_embeddings(embed)


@dataclass
class _Plan:
    """A batch's writes (last per item wins) and the texts and queries to embed before touching Chroma."""

    puts: dict[tuple[Namespace, str], PutOp]
    texts: dict[tuple[Namespace, str], dict[str, str]]  # item -> index path -> text
    queries: list[str]

    def documents(self) -> list[str]:
        return list(dict.fromkeys(t for paths in self.texts.values() for t in paths.values()))


class ChromaStore(BaseStore):
    """LangGraph's BaseStore on Chroma: get/put/delete, filtered and semantic search, namespace listing."""

    supports_ttl = False

    def __init__(
        self,
        client: ClientAPI | None = None,
        *,
        collection: str = "langgraph-store",
        index: IndexConfig | Mapping[str, Any] | None = None,
    ) -> None:
        if collection.endswith(VECTORS_SUFFIX):
            raise ValueError(f"collection {collection!r}: names ending in {VECTORS_SUFFIX!r} are the stores' own")
        self.client = client or open_chroma()[0]  # in-memory, telemetry off, same settings as ChromaIndex
        _refuse_legacy_vectors(self.client, collection)
        self.items = self.client.get_or_create_collection(collection, embedding_function=None)
        self.vectors = self.client.get_or_create_collection(
            collection + VECTORS_SUFFIX, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        self.index_config = dict(index) if index else None
        self.embeddings = resolve_embeddings(self.index_config.get("embed")) if self.index_config else None
        self.dims: int | None = self.index_config.get("dims") if self.index_config else None
        fields = (self.index_config or {}).get("fields") or ["$"]
        self._fields = [(path, _tokens(path)) for path in fields]
        self._max_batch = self.client.get_max_batch_size()
        self._write_lock = threading.Lock()
        self._last_us = 0

    # BaseStore's two primitives: plan and embed first (async where the embedder is), then Chroma in a thread.

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        plan = self._plan(ops)
        docs, queries = {}, {}
        if self.embeddings is not None:
            texts = plan.documents()
            docs = dict(zip(texts, self._checked(self.embeddings.embed_documents(texts) if texts else []), strict=True))
            queries = {q: self._checked([self.embeddings.embed_query(q)])[0] for q in plan.queries}
        return self._execute(ops, plan, docs, queries)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        plan = self._plan(ops)
        docs, queries = {}, {}
        if self.embeddings is not None:
            texts = plan.documents()
            vectors = await self.embeddings.aembed_documents(texts) if texts else []
            docs = dict(zip(texts, self._checked(vectors), strict=True))
            found = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in plan.queries))
            queries = dict(zip(plan.queries, self._checked(list(found)), strict=True))
        return await asyncio.to_thread(self._execute, ops, plan, docs, queries)

    def _plan(self, ops: list[Op]) -> _Plan:
        puts: dict[tuple[Namespace, str], PutOp] = {}
        queries: list[str] = []
        for op in ops:
            if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)  # namespaces become "."-joined metadata: "a.b" must not alias ("a", "b")
            if isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
            elif isinstance(op, SearchOp) and op.query and self.embeddings is not None:
                queries.append(op.query)
        texts = {item: self._index_texts(op) for item, op in puts.items()}
        return _Plan(puts, texts, list(dict.fromkeys(queries)))

    def _index_texts(self, op: PutOp) -> dict[str, str]:
        """The texts a put indexes, by path: the store's fields, or the op's own list; none for index=False."""
        if self.embeddings is None or op.value is None or op.index is False:
            return {}
        fields = self._fields if op.index is None else [(path, _tokens(path)) for path in op.index]
        out: dict[str, str] = {}
        for path, tokens in fields:
            texts = get_text_at_path(op.value, tokens)
            if len(texts) == 1:
                out[path] = texts[0]
            else:
                out.update((f"{path}.{i}", text) for i, text in enumerate(texts))
        return out

    def _checked(self, vectors: Sequence[Sequence[float]]) -> list[list[float]]:
        """Plain float lists of the configured width: a wrong `dims` fails here, not deep inside Chroma."""
        rows = [[float(x) for x in v] for v in vectors]
        for row in rows:
            if self.dims and len(row) != self.dims:
                raise ValueError(f"an embedding has {len(row)} dims; the index config says dims={self.dims}")
        return rows

    def _execute(
        self, ops: list[Op], plan: _Plan, docs: dict[str, list[float]], queries: dict[str, list[float]]
    ) -> list[Result]:
        results: list[Result] = [None] * len(ops)
        gets = {i: _item_id(op.namespace, op.key) for i, op in enumerate(ops) if isinstance(op, GetOp)}
        found = self._fetch(list(dict.fromkeys(gets.values())))
        for i, item_id in gets.items():
            results[i] = found.get(item_id)
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                results[i] = self._search(op, queries.get(op.query or ""))
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        if plan.puts:
            self._write(plan, docs)
        return results

    # Reads

    def _fetch(self, ids: list[str]) -> dict[str, Item]:
        """Items by id (absent ids are simply missing), in chunks Chroma accepts."""
        out: dict[str, Item] = {}
        for chunk in _chunks(ids, self._max_batch):
            got = self.items.get(ids=chunk, include=["documents", "metadatas"])
            for item_id, doc, meta in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True):
                out[item_id] = _to_item(doc, meta)
        return out

    def _ranked(self, where: Where | None, flt: dict[str, Any] | None) -> tuple[list[str], dict[str, Item]]:
        """Ids under a prefix that pass the filter, newest first; values are only read when a filter needs them."""
        got = self.items.get(where=cast(Any, where), include=["metadatas", "documents"] if flt else ["metadatas"])
        rows = list(zip(got["ids"], got["metadatas"] or [], strict=True))
        known: dict[str, Item] = {}
        if flt:
            known = {i: _to_item(d, m) for (i, m), d in zip(rows, got["documents"] or [], strict=True)}
            rows = [(i, m) for i, m in rows if value_matches(known[i].value, flt)]
        rows.sort(key=lambda row: (-int(cast(int, row[1]["updated_us"])), str(row[1]["ns"]), str(row[1]["key"])))
        return [i for i, _ in rows], known

    def _page(self, ids: list[str], known: dict[str, Item]) -> list[Item]:
        missing = self._fetch([i for i in ids if i not in known])
        return [known.get(i) or missing[i] for i in ids if i in known or i in missing]

    def _search(self, op: SearchOp, query: list[float] | None) -> list[SearchItem]:
        start, stop = max(op.offset, 0), max(op.offset, 0) + max(op.limit, 0)
        if stop <= start:
            return []
        where = _where(_prefix(op.namespace_prefix))
        if query is None:
            ids, known = self._ranked(where, op.filter)
            return [_search_item(item, None) for item in self._page(ids[start:stop], known)]
        scored, exhausted = self._nearest(query, where, op.filter, stop)
        if exhausted and len(scored) < stop:  # every vector seen: items without vectors follow, unscored
            ids, known = self._ranked(_where([*_prefix(op.namespace_prefix), {"vectors": 0}]), op.filter)
            scored += [(item, None) for item in self._page(ids[: stop - len(scored)], known)]
        return [_search_item(item, score) for item, score in scored[start:stop]]

    def _nearest(
        self, query: list[float], where: Where | None, flt: dict[str, Any] | None, want: int
    ) -> tuple[list[tuple[Item, float | None]], bool]:
        """The `want` best items by their best text; asks Chroma for more rows until enough items pass the filter.

        Returns the ranked (item, score) pairs and whether every row under the prefix was seen.
        """
        total = self.vectors.count()
        n, cached = min(total, max(2 * want, 16)), {}
        while True:
            if n == 0:
                return [], True
            rows = self._query_rows(query, where, n)
            exhausted = len(rows) < n or n >= total
            if len(rows) < n:  # fewer than asked: rank every row under the prefix exactly, so none is missed
                rows = self._exact_rows(query, where)
            best: dict[str, float] = {}
            for members, similarity in rows:
                for item_id, _path in members:
                    best.setdefault(item_id, similarity)
            cached.update(self._fetch([i for i in best if i not in cached]))
            hits = [(cached[i], s) for i, s in best.items() if i in cached and value_matches(cached[i].value, flt)]
            if len(hits) >= want or exhausted:
                return cast(list[tuple[Item, float | None]], hits[:want]), exhausted
            n = min(total, n * 4)

    def _query_rows(self, query: list[float], where: Where | None, n: int) -> list[tuple[list[Any], float]]:
        """The n nearest rows by Chroma's index: (its [item id, path] pairs, cosine similarity), best first."""
        got = self.vectors.query(
            query_embeddings=cast(Any, [query]), n_results=n, where=cast(Any, where), include=["metadatas", "distances"]
        )
        metas, distances = (got["metadatas"] or [[]])[0], (got["distances"] or [[]])[0]
        return [(json.loads(str(m["items"])), 1.0 - float(d)) for m, d in zip(metas, distances, strict=True)]

    def _exact_rows(self, query: list[float], where: Where | None) -> list[tuple[list[Any], float]]:
        """Every row under the prefix ranked by exact cosine similarity, best first (ties by row id)."""
        got = self.vectors.get(where=cast(Any, where), include=["metadatas", "embeddings"])
        if not got["ids"]:
            return []
        matrix, q = np.asarray(got["embeddings"], dtype=np.float64), np.asarray(query, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
        similarity = (matrix @ q) / np.where(norms == 0, 1.0, norms)
        metas = got["metadatas"] or []
        order = sorted(range(len(got["ids"])), key=lambda i: (-similarity[i], got["ids"][i]))
        return [(json.loads(str(metas[i]["items"])), float(similarity[i])) for i in order]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        conditions = op.match_conditions or ()
        pushed = [
            {f"ns{i}": label}
            for c in conditions
            if c.match_type == "prefix"
            for i, label in enumerate(c.path)
            if label != "*"
        ]
        got = self.items.get(where=cast(Any, _where(pushed)), include=["metadatas"])
        namespaces = {_split(str(m["ns"])) for m in got["metadatas"] or []}
        matching = {ns for ns in namespaces if all(namespace_matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            matching = {ns[: op.max_depth] for ns in matching}
        return sorted(matching)[op.offset : op.offset + op.limit]

    # Writes

    def _write(self, plan: _Plan, docs: dict[str, list[float]]) -> None:
        """Apply a batch's puts and deletes; created_at survives overwrites, an item's rows are replaced.

        Each row's item list is recomputed from what Chroma holds, so replaying a batch writes the same rows."""
        with self._write_lock:  # read-modify-write of created_at and rows, and strictly increasing timestamps
            now = self._last_us = max(time.time_ns() // 1000, self._last_us + 1)
            ids = {item: _item_id(*item) for item in plan.puts}
            before = self._existing(list(ids.values()))
            added: dict[str, set[tuple[str, str]]] = {}
            texts: dict[str, tuple[Namespace, str]] = {}  # row -> (namespace, text), for rows given a vector
            rows_of: dict[str, list[str]] = {}
            for item, paths in plan.texts.items():
                for path, text in paths.items():
                    row = _row_id(item[0], text)
                    added.setdefault(row, set()).add((ids[item], path))
                    texts[row] = (item[0], text)
                rows_of[ids[item]] = sorted({_row_id(item[0], text) for text in paths.values()})
            affected = set(added) | {row for _, rows in before.values() for row in rows}
            rewritten = self._members(sorted(affected))
            put_ids = set(ids.values())
            for row in affected:
                kept = {m for m in rewritten.get(row, set()) if m[0] not in put_ids}
                rewritten[row] = kept | added.get(row, set())
            self._write_rows(rewritten, texts, docs)
            for chunk in _chunks([ids[item] for item, op in plan.puts.items() if op.value is None], self._max_batch):
                self.items.delete(ids=chunk)
            self._upsert(
                self.items,
                [
                    (
                        i,
                        json.dumps(dict(op.value), ensure_ascii=False),
                        placeholder_vector(i),
                        _meta(item, before.get(i, (now, []))[0], now, len(plan.texts[item]), rows_of.get(i, [])),
                    )
                    for item, op in plan.puts.items()
                    if op.value is not None and (i := ids[item])
                ],
            )

    def _write_rows(
        self,
        rows: dict[str, set[tuple[str, str]]],
        texts: dict[str, tuple[Namespace, str]],
        docs: dict[str, list[float]],
    ) -> None:
        """Rows left without items go; rows with a text of this batch are upserted with its vector; the others
        only get their item lists rewritten."""
        gone = sorted(row for row, members in rows.items() if not members)
        for chunk in _chunks(gone, self._max_batch):
            self.vectors.delete(ids=chunk)
        live = {row: members for row, members in rows.items() if members}
        self._upsert(
            self.vectors,
            [
                (row, texts[row][1], docs[texts[row][1]], {**_labels(texts[row][0]), **_row_meta(members)})
                for row, members in live.items()
                if row in texts
            ],
        )
        stale = sorted(row for row in live if row not in texts)
        for chunk in _chunks(stale, self._max_batch):
            self.vectors.update(ids=chunk, metadatas=[_row_meta(live[row]) for row in chunk])  # type: ignore[misc]

    def _members(self, rows: list[str]) -> dict[str, set[tuple[str, str]]]:
        """The (item id, path) pairs each existing row holds now."""
        out: dict[str, set[tuple[str, str]]] = {}
        for chunk in _chunks(rows, self._max_batch):
            got = self.vectors.get(ids=chunk, include=["metadatas"])
            for row, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[row] = {(str(i), str(p)) for i, p in json.loads(str(meta["items"]))}
        return out

    def _upsert(self, collection: Collection, rows: list[tuple[str, str, list[float], dict[str, Any]]]) -> None:
        """Write (id, document, embedding, metadata) rows in chunks no larger than Chroma's max batch."""
        for chunk in _chunks(rows, self._max_batch):
            ids, documents, embeddings, metadatas = zip(*chunk, strict=True)
            collection.upsert(
                ids=list(ids),
                documents=list(documents),
                embeddings=cast(Any, list(embeddings)),
                metadatas=cast(Any, list(metadatas)),
            )

    def _existing(self, ids: list[str]) -> dict[str, tuple[int, list[str]]]:
        """Existing items' created_us (an overwrite keeps its creation time) and the rows holding their texts."""
        out: dict[str, tuple[int, list[str]]] = {}
        for chunk in _chunks(ids, self._max_batch):
            got = self.items.get(ids=chunk, include=["metadatas"])
            for i, m in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[i] = (int(cast(int, m["created_us"])), json.loads(str(m.get("rows") or "[]")))
        return out


def _refuse_legacy_vectors(client: ClientAPI, collection: str) -> None:
    """Stores written before text rows kept one vector per item and path in `<collection>-vectors`; read with
    today's layout their items would silently never be found by a query, so such a store is refused as it is."""
    name = f"{collection}-vectors"
    try:
        legacy = client.get_collection(name, embedding_function=None)
    except (NotFoundError, ValueError):
        return
    metas = legacy.get(limit=1, include=["metadatas"])["metadatas"] or []
    if metas and "item" in metas[0] and "path" in metas[0]:
        raise AmphoreusError(
            f"{describe_store(client)}: ChromaStore collection {collection!r} was written by an older "
            f"amphoreus-graph (its vectors are in {name!r}, one per item); expected a store written by this version "
            "(start a fresh AMPHOREUS_STORE_DIR or another collection; nothing was changed)"
        )


def make_store() -> ChromaStore:
    """`langgraph dev`'s long-term store: embedded Chroma in $AMPHOREUS_STORE_DIR (default memory/langgraph-store).

    One store (and one directory lock) per process and directory: langgraph-api calls the factory once per
    thread, and a second lock on the same directory from the same process would fail.
    """
    directory = Path(os.environ.get("AMPHOREUS_STORE_DIR") or DEFAULT_STORE_DIR).resolve()
    return _persistent_store(directory)[0]


@cache
def _persistent_store(directory: Path) -> tuple[ChromaStore, StoreLock | None]:
    client, lock = open_chroma(directory)
    return ChromaStore(client, index={"dims": DEFAULT_DIMS, "embed": "amphoreus", "fields": ["$"]}), lock


# Small pure helpers


def _item_id(*parts: Any) -> str:
    """A stable id for (namespace, key), or for (item id, index path): the same input always hits one record."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def _tokens(path: str) -> str | list[str]:
    return path if path == "$" else tokenize_path(path)


def _row_id(namespace: Namespace, text: str) -> str:
    """A text's row in one namespace: every item of that namespace indexing that text shares it."""
    return _item_id("text", list(namespace), text)


def _row_meta(members: set[tuple[str, str]]) -> dict[str, Any]:
    """A row's (item id, path) pairs; its namespace labels (`ns0…`, shared by every member) are set with its
    vector and kept by metadata-only updates, which Chroma merges."""
    return {"items": json.dumps(sorted(members), ensure_ascii=False)}


def _meta(item: tuple[Namespace, str], created: int, updated: int, vectors: int, rows: list[str]) -> dict[str, Any]:
    namespace, key = item
    times = {"created_us": created, "updated_us": updated, "vectors": vectors, "rows": json.dumps(rows)}
    return {"ns": ".".join(namespace), "key": key, "depth": len(namespace), **_labels(namespace), **times}


def _labels(namespace: Namespace) -> dict[str, str]:
    return {f"ns{i}": label for i, label in enumerate(namespace)}


def _prefix(namespace: Namespace) -> list[Where]:
    return [{f"ns{i}": label} for i, label in enumerate(namespace)]


def _where(conditions: list[Where]) -> Where | None:
    """Chroma's `$and` needs two or more operands."""
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}


def _split(ns: str) -> Namespace:
    return tuple(ns.split(".")) if ns else ()


def _timestamp(us: Any) -> datetime:
    return _EPOCH + timedelta(microseconds=int(us))


def _to_item(document: str | None, meta: Mapping[str, Any]) -> Item:
    return Item(
        value=json.loads(document or "{}"),
        key=str(meta["key"]),
        namespace=_split(str(meta["ns"])),
        created_at=_timestamp(meta["created_us"]),
        updated_at=_timestamp(meta["updated_us"]),
    )


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, score)


def _chunks(seq: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(seq), size):
        yield list(seq[start : start + size])
