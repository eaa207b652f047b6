"""A ChromaStore's two Chroma collections, named and configured as the memory backend's are (naming.py,
chroma_index.open_collection), and written in chunks of the client's max batch:

- `am2.<store>.lgs.items`: one record per item; document = the value as JSON; metadata = `ns` (labels joined by
  "."; BaseStore forbids "." in labels), `key`, `created_us`/`updated_us` (UTC epoch microseconds), `rows` (the
  ids of the text rows holding its indexed texts, as JSON) and, for an item with a TTL, `ttl_minutes` and
  `expires_us`. Chroma wants a vector on every record, so items carry a placeholder (chroma_index), never searched.
- `am2.<store>.lgs.rows`: one row per distinct indexed text per namespace, with the real embedding. Many identical
  vectors degrade Chroma's HNSW index (a search for a distinct text returned a duplicate and left the exact match
  out; a limit of 1,000 over 201 items returned 107), so a text is indexed once however many items hold it.

Which items a row serves is read from the items' `rows`, so a row written before a crash took its items is
simply unused; opening a store deletes such rows.
"""

from __future__ import annotations

import json
import uuid
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, cast

import chromadb
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Space

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_index import chunks, describe_store, open_chroma, open_collection, placeholder_vector
from amphoreus_graph.memory.naming import store_collection
from amphoreus_graph.memory.store_catalog import Catalog, Entry, Namespace
from amphoreus_graph.memory.store_writes import Changes


class StoreCollections:
    """The Chroma side of one store: read it all into a catalog once, then write each batch's changes."""

    def __init__(self, client: ClientAPI, name: str, space: Space | None) -> None:
        """`space`: the distance the rows must be ranked by (None: no semantic index, any will do)."""
        self.items = open_collection(client, store_collection(name, "items"))
        self.rows = open_collection(client, store_collection(name, "rows"), space=space or "cosine")
        held = (self.rows.configuration.get("hnsw") or {}).get("space") or "l2"
        if space is not None and held != space:
            raise AmphoreusError(
                f"{describe_store(client)}: ChromaStore {name!r} ranks in Chroma's {held!r} space; expected {space!r}, "
                "as the index config's distance_type asks (open it with the distance it was made with, or another name)"
            )
        self.max_batch = client.get_max_batch_size()

    def load(self) -> Catalog:
        """Every item, filed by namespace, least recently written first; rows no item holds are deleted."""
        texts = {row: text for row, text, _ in self._all(self.rows, ["documents"])}
        found = []
        for item_id, document, meta in self._all(self.items, ["documents", "metadatas"]):
            rows = tuple(row for row in json.loads(str(meta.get("rows") or "[]")) if row in texts)
            found.append((_split(str(meta["ns"])), str(meta["key"]), _entry(item_id, document, meta, rows)))
        catalog = Catalog()
        for namespace, key, entry in sorted(found, key=lambda f: f[2].updated_us):
            catalog.put(namespace, key, entry, {row: texts[row] for row in entry.rows})
        orphans = [row for row in texts if catalog.namespace_of(row) is None]
        for chunk in chunks(orphans, self.max_batch):
            self.rows.delete(ids=chunk)
        return catalog

    def _all(self, collection: Collection, include: list[str]) -> list[tuple[str, str, Mapping[str, Any]]]:
        """(id, document, metadata) of every record, read a max batch at a time."""
        out: list[tuple[str, str, Mapping[str, Any]]] = []
        while True:
            got = collection.get(include=cast(Any, include), limit=self.max_batch, offset=len(out))
            documents = got["documents"] or [""] * len(got["ids"])
            metadatas = got["metadatas"] or [{}] * len(got["ids"])
            out.extend(zip(got["ids"], documents, metadatas, strict=True))  # type: ignore[arg-type]
            if len(got["ids"]) < self.max_batch:
                return out

    def write(self, changes: Changes, vectors: Mapping[str, Sequence[float]]) -> None:
        """New rows first, then items, then deletions: a crash part-way leaves at worst rows no item holds."""
        rows = list(changes.new_rows.items())
        for chunk in chunks(rows, self.max_batch):
            self.rows.upsert(
                ids=[row for row, _ in chunk],
                documents=[text for _, text in chunk],
                embeddings=cast(Any, [list(vectors[text]) for _, text in chunk]),
            )
        for chunk in chunks(changes.items, self.max_batch):
            self.items.upsert(
                ids=[written.entry.id for written in chunk],
                documents=[written.entry.document for written in chunk],
                embeddings=cast(Any, [placeholder_vector(written.entry.id) for written in chunk]),
                metadatas=cast(Any, [_meta(written.namespace, written.key, written.entry) for written in chunk]),
            )
        for chunk in chunks([item_id for _, _, item_id in changes.deleted], self.max_batch):
            self.items.delete(ids=chunk)
        for chunk in chunks(changes.empty_rows, self.max_batch):
            self.rows.delete(ids=chunk)

    def set_expiry(self, entries: Sequence[tuple[Entry, int]]) -> None:
        """Move items' expiry (a TTL refreshed by a read)."""
        for chunk in chunks(entries, self.max_batch):
            self.items.update(ids=[entry.id for entry, _ in chunk], metadatas=[{"expires_us": us} for _, us in chunk])

    def nearest(self, query: Sequence[float], rows: list[str] | None, n: int) -> list[tuple[str, float]]:
        """Chroma's n nearest rows (among `rows`, or all): (row id, distance), nearest first."""
        got = self.rows.query(query_embeddings=cast(Any, [list(query)]), ids=rows, n_results=n, include=["distances"])
        return list(zip(got["ids"][0], (got["distances"] or [[]])[0], strict=True))

    def vectors(self, rows: list[str]) -> tuple[list[str], np.ndarray]:
        """The rows' embeddings, for ranking them exactly."""
        ids: list[str] = []
        matrix: list[Any] = []
        for chunk in chunks(rows, self.max_batch):
            got = self.rows.get(ids=chunk, include=["embeddings"])
            ids.extend(got["ids"])
            matrix.extend(got["embeddings"] if got["embeddings"] is not None else [])
        return ids, np.asarray(matrix, dtype=np.float64)


def _entry(item_id: str, document: str, meta: Mapping[str, Any], rows: tuple[str, ...]) -> Entry:
    ttl, expires = meta.get("ttl_minutes"), meta.get("expires_us")
    return Entry(
        id=item_id,
        value=json.loads(document or "{}"),
        document=document,
        created_us=int(meta["created_us"]),
        updated_us=int(meta["updated_us"]),
        rows=rows,
        ttl_minutes=None if ttl is None else float(ttl),
        expires_us=None if expires is None else int(expires),
    )


def _meta(namespace: Namespace, key: str, entry: Entry) -> dict[str, Any]:
    """An item's metadata; None removes a key an earlier write set (Chroma merges an upsert's metadata)."""
    return {
        "ns": ".".join(namespace),
        "key": key,
        "created_us": entry.created_us,
        "updated_us": entry.updated_us,
        "rows": json.dumps(list(entry.rows)),
        "ttl_minutes": entry.ttl_minutes,
        "expires_us": entry.expires_us,
    }


def _split(ns: str) -> Namespace:
    return tuple(ns.split(".")) if ns else ()


def private_client(owner: object) -> ClientAPI:
    """An in-memory client no other sees: chromadb's in-memory clients share one store per process, so this one
    gets a database of its own, deleted when `owner` is collected."""
    client = open_chroma()[0]
    admin = chromadb.AdminClient(client.get_settings())
    database = f"store-{uuid.uuid4().hex}"
    admin.create_database(database)
    client.set_database(database)
    weakref.finalize(owner, admin.delete_database, database).atexit = False
    return client
