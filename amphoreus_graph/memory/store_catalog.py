"""A ChromaStore's items held in process, by namespace: what lets a search or a listing skip Chroma's filters.

Chroma evaluates a metadata filter by scanning (a prefix search cost 28 ms over 100 items of 10,000 and 650 ms
over all of them), so the store keeps its own catalog: a tree of namespace labels whose nodes hold their items
(value, times, TTL, the text rows holding their indexed texts) in the order they were last written, and which
text rows they file under. Chroma stays the durable copy and the vector index; the catalog is read back from it
when a store opens, and changes only after Chroma has taken a write.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

Namespace = tuple[str, ...]


@dataclass(slots=True)
class Entry:
    """One item: its Chroma id, value (and the JSON written), times in UTC epoch microseconds, text rows, TTL."""

    id: str
    value: dict[str, Any]
    document: str
    created_us: int
    updated_us: int
    rows: tuple[str, ...] = ()
    ttl_minutes: float | None = None
    expires_us: int | None = None

    def expired(self, now_us: int) -> bool:
        return self.expires_us is not None and self.expires_us <= now_us


@dataclass(slots=True)
class _Row:
    text: str
    keys: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    items: dict[str, Entry] = field(default_factory=dict)  # this namespace's items, least recently written first
    rows: dict[str, _Row] = field(default_factory=dict)  # text row id -> its text and the keys filed under it
    texts: dict[str, str] = field(default_factory=dict)  # indexed text -> its row id


@dataclass(frozen=True, slots=True)
class Found:
    """An item as a read finds it."""

    namespace: Namespace
    key: str
    entry: Entry


class Catalog:
    """Every item of one store by namespace, and the text rows each namespace's items file under."""

    def __init__(self) -> None:
        self._root = _Node()
        self._row_namespace: dict[str, Namespace] = {}
        self._expiring: dict[tuple[Namespace, str], None] = {}  # items with a TTL

    # Items

    def get(self, namespace: Namespace, key: str) -> Entry | None:
        node = self._node(namespace)
        return node.items.get(key) if node else None

    def put(self, namespace: Namespace, key: str, entry: Entry, texts: dict[str, str]) -> None:
        """File (or refile) an item, last written; `texts` maps each of its row ids to the text it holds."""
        self.remove(namespace, key)
        node = self._root
        for label in namespace:
            node = node.children.setdefault(label, _Node())
        node.items[key] = entry
        for row, text in texts.items():
            node.rows.setdefault(row, _Row(text)).keys.add(key)
            node.texts[text] = row
            self._row_namespace[row] = namespace
        if entry.expires_us is not None:
            self._expiring[(namespace, key)] = None

    def remove(self, namespace: Namespace, key: str) -> Entry | None:
        path = self._path(namespace)
        if path is None or key not in path[-1].items:
            return None
        node = path[-1]
        entry = node.items.pop(key)
        for row in entry.rows:
            node.rows[row].keys.discard(key)
            if not node.rows[row].keys:
                del node.texts[node.rows.pop(row).text]
                del self._row_namespace[row]
        self._expiring.pop((namespace, key), None)
        for label, (parent, child) in zip(reversed(namespace), _pairs(path), strict=True):
            if child.items or child.children:
                break
            del parent.children[label]
        return entry

    def row_of(self, namespace: Namespace, text: str) -> str | None:
        """The row already holding `text` in this namespace, if any."""
        node = self._node(namespace)
        return node.texts.get(text) if node else None

    def keys_of(self, row: str) -> list[str]:
        """The keys filed under a row (in its namespace)."""
        node = self._node(self._row_namespace[row])
        return sorted(node.rows[row].keys) if node else []

    def namespace_of(self, row: str) -> Namespace | None:
        return self._row_namespace.get(row)

    def expiring(self) -> list[Found]:
        return [Found(ns, key, entry) for ns, key in self._expiring if (entry := self.get(ns, key)) is not None]

    # Reads under a prefix

    def newest(self, prefix: Namespace) -> Iterator[Found]:
        """Every item under `prefix` (whole labels), most recently written first."""
        streams = [_newest_first(ns, node) for ns, node in self._subtree(prefix) if node.items]
        return heapq.merge(*streams, key=lambda found: -found.entry.updated_us)

    def namespaces(self, head: Namespace) -> Iterator[tuple[Namespace, Iterable[Entry]]]:
        """Each namespace under `head` that holds items, with its items."""
        for namespace, node in self._subtree(head):
            if node.items:
                yield namespace, node.items.values()

    def rows_under(self, prefix: Namespace) -> list[str]:
        return [row for _, node in self._subtree(prefix) for row in node.rows]

    @property
    def row_count(self) -> int:
        return len(self._row_namespace)

    # Tree plumbing

    def _node(self, namespace: Namespace) -> _Node | None:
        path = self._path(namespace)
        return path[-1] if path else None

    def _path(self, namespace: Namespace) -> list[_Node] | None:
        """The nodes from the root down to `namespace`, or None if no item lives under it."""
        path = [self._root]
        for label in namespace:
            child = path[-1].children.get(label)
            if child is None:
                return None
            path.append(child)
        return path

    def _subtree(self, prefix: Namespace) -> Iterator[tuple[Namespace, _Node]]:
        top = self._node(prefix)
        if top is None:
            return
        stack = [(prefix, top)]
        while stack:
            namespace, node = stack.pop()
            yield namespace, node
            stack.extend(((*namespace, label), child) for label, child in node.children.items())


def _newest_first(namespace: Namespace, node: _Node) -> Iterator[Found]:
    for key in reversed(node.items):
        yield Found(namespace, key, node.items[key])


def _pairs(path: list[_Node]) -> Iterator[tuple[_Node, _Node]]:
    """(parent, child) from the deepest node up to the root's child."""
    for i in range(len(path) - 1, 0, -1):
        yield path[i - 1], path[i]
