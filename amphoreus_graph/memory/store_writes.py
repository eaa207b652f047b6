"""What a batch's puts and deletes change, worked out before anything is written.

A batch's writes become one `Changes`: the text rows to add, the items to write (an overwrite keeps the item's
id and `created_at`, as PostgresStore does), the items to delete, and the rows no item holds any more. Chroma
takes the changes first and the catalog after, so a failed write leaves the catalog as Chroma last had it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from langgraph.store.base import PutOp

from amphoreus_graph.memory.naming import record_key
from amphoreus_graph.memory.store_catalog import Catalog, Entry, Namespace

US_PER_MINUTE = 60_000_000


@dataclass(frozen=True, slots=True)
class Written:
    """An item as a batch writes it, with the text of each row it files under."""

    namespace: Namespace
    key: str
    entry: Entry
    texts: dict[str, str]  # row id -> text


@dataclass
class Changes:
    """A batch's effect: rows to embed and add, items to write and to delete, rows no item holds any more."""

    new_rows: dict[str, str] = field(default_factory=dict)  # row id -> text, to embed and add
    items: list[Written] = field(default_factory=list)
    deleted: list[tuple[Namespace, str, str]] = field(default_factory=list)  # (namespace, key, item id)
    empty_rows: list[str] = field(default_factory=list)

    def apply(self, catalog: Catalog) -> None:
        for namespace, key, _ in self.deleted:
            catalog.remove(namespace, key)
        for written in self.items:
            catalog.put(written.namespace, written.key, written.entry, written.texts)


def plan(
    catalog: Catalog,
    puts: Mapping[tuple[Namespace, str], PutOp],
    texts: Mapping[tuple[Namespace, str], dict[str, str]],
    now_us: int,
) -> Changes:
    """The changes of a batch's last put per item (`texts`: each put's index texts by path), written at `now_us`."""
    changes = Changes()
    leaving: dict[str, set[str]] = {}  # row -> keys whose old version filed under it
    joining: dict[str, set[str]] = {}
    for (namespace, key), op in puts.items():
        old = catalog.get(namespace, key)
        for row in old.rows if old else ():
            leaving.setdefault(row, set()).add(key)
        if op.value is None:
            if old is not None:
                changes.deleted.append((namespace, key, old.id))
            continue
        rows: dict[str, str] = {}
        for text in dict.fromkeys(texts.get((namespace, key), {}).values()):
            row = catalog.row_of(namespace, text) or _new_row(changes, namespace, text)
            rows[row] = text
            joining.setdefault(row, set()).add(key)
        entry = _entry(old, record_key("item", *namespace, key), op, tuple(rows), now_us)
        changes.items.append(Written(namespace, key, entry, rows))
    for row, keys in leaving.items():
        if not (set(catalog.keys_of(row)) - keys) | joining.get(row, set()):
            changes.empty_rows.append(row)
    return changes


def _new_row(changes: Changes, namespace: Namespace, text: str) -> str:
    row = record_key("text", *namespace, text)
    changes.new_rows[row] = text
    return row


def expiry(minutes: float | None, now_us: int) -> int | None:
    return None if minutes is None else now_us + round(minutes * US_PER_MINUTE)


def _entry(old: Entry | None, new_id: str, op: PutOp, rows: tuple[str, ...], now_us: int) -> Entry:
    document = json.dumps(dict(op.value or {}), ensure_ascii=False)
    return Entry(
        id=old.id if old else new_id,
        value=json.loads(document),  # a copy of its own: the caller may go on changing the value it put
        document=document,
        created_us=old.created_us if old else now_us,
        updated_us=now_us,
        rows=rows,
        ttl_minutes=op.ttl,
        expires_us=expiry(op.ttl, now_us),
    )
