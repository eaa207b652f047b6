"""A batch's reads, answered from the catalog as it was before the batch's writes; Chroma only ranks vectors.

Filter-only search lists items newest first (by `updated_at`, as PostgresStore does), value filters following
InMemoryStore (store_filters.py). With a query, Chroma's HNSW index ranks the text rows under the prefix (named
by id, never found by a metadata filter) and each item scores as its best row; when Chroma answers with fewer
rows than asked, every row under the prefix is ranked exactly instead, so "fewer than asked" always means "all
there is". Scored items come first, then items without vectors (`score=None`), paginated as one list.
`list_namespaces` lists namespaces that hold items. With `omit_expired`, expired items are invisible to all three.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from langgraph.store.base import GetOp, Item, ListNamespacesOp, SearchItem, SearchOp

from amphoreus_graph.memory.store_catalog import Catalog, Entry, Found, Namespace
from amphoreus_graph.memory.store_collections import StoreCollections
from amphoreus_graph.memory.store_filters import namespace_matches, value_matches
from amphoreus_graph.memory.store_vectors import VectorIndex

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Reader:
    """One batch's reads at one instant; remembers the items read with `refresh_ttl` that have a TTL."""

    catalog: Catalog
    collections: StoreCollections
    index: VectorIndex | None
    now_us: int
    omit_expired: bool
    refreshed: dict[str, Entry] = field(default_factory=dict)

    def get(self, op: GetOp) -> Item | None:
        entry = self.catalog.get(op.namespace, op.key)
        if entry is None or not self._live(entry):
            return None
        self._touch(entry, op.refresh_ttl)
        return _item(op.namespace, op.key, entry)

    def search(self, op: SearchOp, query: list[float] | None) -> list[SearchItem]:
        start = max(op.offset, 0)
        stop = start + max(op.limit, 0)
        if stop <= start:
            return []
        found: list[tuple[Found, float | None]]
        if query is None:
            found = [(f, None) for f in islice(self._matching(op.namespace_prefix, op.filter), start, stop)]
        else:
            found = self._ranked(op, query, stop)[start:stop]
        for f, _ in found:
            self._touch(f.entry, op.refresh_ttl)
        return [_search_item(f, score) for f, score in found]

    def list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        conditions = op.match_conditions or ()
        listed = {
            namespace
            for namespace, entries in self.catalog.namespaces(_literal_head(conditions))
            if all(namespace_matches(c, namespace) for c in conditions)
            and (not self.omit_expired or any(self._live(e) for e in entries))
        }
        if op.max_depth is not None:
            listed = {namespace[: op.max_depth] for namespace in listed}
        return sorted(listed)[op.offset : op.offset + op.limit]

    def _matching(self, prefix: Namespace, flt: dict[str, Any] | None) -> Iterator[Found]:
        return (f for f in self.catalog.newest(prefix) if self._live(f.entry) and value_matches(f.entry.value, flt))

    def _ranked(self, op: SearchOp, query: list[float], want: int) -> list[tuple[Found, float | None]]:
        ranked, exhausted = self._nearest(op.namespace_prefix, op.filter, query, want)
        if exhausted and len(ranked) < want:  # every vector seen: items without vectors follow, unscored
            unscored = (f for f in self._matching(op.namespace_prefix, op.filter) if not f.entry.rows)
            ranked += [(f, None) for f in islice(unscored, want - len(ranked))]
        return ranked

    def _nearest(
        self, prefix: Namespace, flt: dict[str, Any] | None, query: list[float], want: int
    ) -> tuple[list[tuple[Found, float | None]], bool]:
        """The `want` best items by their best row, asking Chroma for more rows until enough pass the filter.

        Returns them with whether every row under the prefix was seen."""
        assert self.index is not None  # a query is only embedded when the store has an index
        rows = self.catalog.rows_under(prefix)
        named = None if len(rows) == self.catalog.row_count else rows  # the whole store: no need to name them
        n = min(len(rows), max(2 * want, 16))
        while True:
            if n == 0:
                return [], True
            scored = [(row, self.index.score(d)) for row, d in self.collections.nearest(query, named, n)]
            exhausted = n >= len(rows)
            if len(scored) < n:  # fewer than asked: rank every row under the prefix exactly, so none is missed
                scored, exhausted = self._exact(rows, query), True
            best: dict[tuple[Namespace, str], tuple[Found, float | None]] = {}
            for row, score in scored:
                for f in self._filed_under(row):
                    if (f.namespace, f.key) not in best and self._live(f.entry) and value_matches(f.entry.value, flt):
                        best[(f.namespace, f.key)] = (f, score)
            if len(best) >= want or exhausted:
                return list(best.values())[:want], exhausted
            n = min(len(rows), n * 4)

    def _exact(self, rows: list[str], query: list[float]) -> list[tuple[str, float]]:
        assert self.index is not None
        ids, matrix = self.collections.vectors(rows)
        if not ids:
            return []
        scores = self.index.exact_scores(matrix, query)
        return sorted(((row, float(s)) for row, s in zip(ids, scores, strict=True)), key=lambda r: (-r[1], r[0]))

    def _filed_under(self, row: str) -> Iterator[Found]:
        namespace = self.catalog.namespace_of(row)
        if namespace is None:
            return
        for key in self.catalog.keys_of(row):
            entry = self.catalog.get(namespace, key)
            if entry is not None:
                yield Found(namespace, key, entry)

    def _live(self, entry: Entry) -> bool:
        return not (self.omit_expired and entry.expired(self.now_us))

    def _touch(self, entry: Entry, refresh: bool) -> None:
        if refresh and entry.ttl_minutes is not None:
            self.refreshed[entry.id] = entry


def _literal_head(conditions: tuple[Any, ...]) -> Namespace:
    """The labels every listed namespace must start with: a prefix condition's labels before its first '*'."""
    for condition in conditions:
        if condition.match_type == "prefix":
            path = tuple(condition.path)
            return path[: path.index("*")] if "*" in path else path
    return ()


def _timestamp(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _item(namespace: Namespace, key: str, entry: Entry) -> Item:
    """An item as handed out: its value parsed anew, so a caller changing it changes nothing stored."""
    return Item(
        value=_fresh(entry),
        key=key,
        namespace=namespace,
        created_at=_timestamp(entry.created_us),
        updated_at=_timestamp(entry.updated_us),
    )


def _search_item(found: Found, score: float | None) -> SearchItem:
    entry = found.entry
    return SearchItem(
        found.namespace,
        found.key,
        _fresh(entry),
        _timestamp(entry.created_us),
        _timestamp(entry.updated_us),
        score,
    )


def _fresh(entry: Entry) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(entry.document)
    return value
