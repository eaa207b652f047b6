"""How an agent's records sit in its index (index.py): one row (one vector) per distinct text, per role.

Many records share a text: a routine event filed round after round, a public record copied to every agent,
reflections that repeat themselves. An HNSW index (Chroma's) degrades on many identical vectors: a search that
should find a distinct record returns duplicates and leaves the exact match out, and asks for N come back
with fewer than N while more exist. So an agent's index holds one row per (role, text): its id is derived from
the text, its vector is the text's embedding, and its metadata lists every record filed under that text
(`records`: a JSON list, each record without its text and owner, sorted by id). Recall ranks rows, then
every record of a hit row. Writes stay idempotent: a row's id and content are functions of the records it
holds, so replaying a round after a crash writes the same rows again.

The role ("h" an agent's private records, "p" public records: the society's public index, or an agent's own copy in
a store written before it) is part of the row id, so a public record and a private one never share a row, and which
records are public is known from where they sit, never from an owner string an agent's name could equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.held_vectors import HeldVectors
from amphoreus_graph.memory.naming import name_hash, record_key
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.tally import MODULUS, Tally, record_term

PRIVATE_ROLE, PUBLIC_ROLE = "h", "p"


class DamagedStore(AmphoreusError):
    """A row the store gives back that is not what Remembrance wrote (damaged on disk): one line, never a
    traceback from deep inside the parsing."""


def row_id(public: bool, text: str) -> str:
    """The row a text is filed under in one agent's index (the index scopes it to the agent)."""
    return (PUBLIC_ROLE if public else PRIVATE_ROLE) + record_key(text)


def access_prefix(agent: str) -> str:
    """What an agent's access ids start with: the hash of its exact name, of fixed length (see `access_id`)."""
    return f"a{name_hash(agent)}:"


def access_id(agent: str, record_id: str) -> str:
    """The row of a private record's last-access tick in the society's access collection: keyed by the agent
    too (a fixed-length hash of its name, then the record id), so two agents whose record ids happen to be
    equal never share a tick."""
    return access_prefix(agent) + record_id


def _pack(records: Iterable[MemoryRecord]) -> str:
    rows = [r.model_dump(mode="json", exclude={"text", "owner"}) for r in sorted(records, key=lambda r: r.id)]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


@dataclass
class HeldCollection:
    """One index as held in this process: records by id, the row each sits in, which are public. An agent's index,
    or the society's public one (`agent` SHARED_HOLDER), whose records every agent of `holders` holds."""

    agent: str
    holders: tuple[str, ...] = ()  # who holds what this index holds, as the tally counts it (given none: the agent)
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    public: set[str] = field(default_factory=set)
    rows: dict[str, set[str]] = field(default_factory=dict)  # row id -> record ids
    row_of: dict[str, str] = field(default_factory=dict)  # record id -> row id
    vectors: HeldVectors | None = field(default_factory=HeldVectors)  # each row's vector; None: not held
    _digest: int = field(default=0, repr=False)  # the records' share of the society's tally (tally.py)

    def __post_init__(self) -> None:
        self.holders = self.holders or (self.agent,)

    @classmethod
    def read(
        cls,
        agent: str,
        ids: Sequence[str],
        documents: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]],
        vectors: Sequence[Sequence[float]] | None,
        ticks: Callable[[list[str]], Mapping[str, int]],
        holders: tuple[str, ...] = (),
    ) -> HeldCollection:
        """Rebuild from an index's rows; `ticks` looks up private records' last access by access id. (A
        agent's first recall in a process pays for this: each record is validated once, no id is hashed.)"""
        held = cls(agent, holders)
        prefix = access_prefix(agent)
        parsed: list[tuple[MemoryRecord, str]] = []
        for rid, text, meta in zip(ids, documents, metadatas, strict=True):
            owner = PUBLIC if rid.startswith(PUBLIC_ROLE) else agent
            try:
                for fields in json.loads(str(meta["records"])):
                    parsed.append((MemoryRecord.model_validate({**fields, "owner": owner, "text": text}), rid))
            except (KeyError, TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
                raise DamagedStore(
                    f"memory store: a row of {agent!r}'s memories (row {rid}) does not hold records as they were "
                    f"written ({type(exc).__name__}); expected the store as its run wrote it (restore it, or "
                    "--resume RUN --fresh-memory to rebuild it from the run's beginning)"
                ) from None
        last = ticks([prefix + r.id for r, rid in parsed if not rid.startswith(PUBLIC_ROLE)])
        for record, rid in parsed:
            public = rid.startswith(PUBLIC_ROLE)
            tick = None if public else last.get(prefix + record.id)
            if tick is not None and tick > record.last_accessed:
                record = record.model_copy(update={"last_accessed": tick})
            held._place(record, public, rid)
        held.vectors = None if vectors is None else HeldVectors.of(ids, vectors)  # None: the index answers
        return held

    def hold_vector(self, row: str, vector: Sequence[float]) -> None:
        """Keep a row's vector here (when vectors are held at all)."""
        if self.vectors is not None:
            self.vectors.put(row, vector)

    def drop_vectors(self, rows: Iterable[str]) -> None:
        """Let go of the vectors of rows the index no longer has."""
        if self.vectors is not None:
            self.vectors.remove(rows)

    def searchable(self) -> bool:
        """Whether every row's vector is held here, so recall can rank them without the index."""
        return self.vectors is not None and len(self.vectors) == len(self.rows)

    def nearest(self, query: Sequence[float], n: int) -> list[tuple[str, float]]:
        """The n rows nearest `query` by exact cosine, ties by row id (needs `searchable`)."""
        assert self.vectors is not None
        return self.vectors.nearest(query, n)

    def put(self, record: MemoryRecord, public: bool) -> set[str]:
        """Hold a record (replacing one with its id); returns the rows whose content changed."""
        before = self.remove(record.id)
        row = row_id(public, record.text)
        self._place(record, public, row)
        return {row} if before is None else {row, before}

    def tally(self) -> Tally:
        """What this index holds, as a society's tally counts it."""
        return Tally(len(self.records) * len(self.holders), self._digest)

    def _place(self, record: MemoryRecord, public: bool, row: str) -> None:
        self._digest = (self._digest + record_term(self.holders, public, record)) % MODULUS
        self.records[record.id] = record
        self.row_of[record.id] = row
        self.rows.setdefault(row, set()).add(record.id)
        if public:
            self.public.add(record.id)

    def remove(self, record_id: str) -> str | None:
        """Let go of a record; returns the row it sat in (None if it was not held)."""
        row = self.row_of.pop(record_id, None)
        if row is None:
            return None
        record = self.records.pop(record_id)
        self._digest = (self._digest - record_term(self.holders, record_id in self.public, record)) % MODULUS
        self.public.discard(record_id)
        members = self.rows[row]
        members.discard(record_id)
        if not members:
            del self.rows[row]
        return row

    def row_records(self, row: str) -> list[MemoryRecord]:
        return [self.records[i] for i in sorted(self.rows.get(row, ()))]

    def text(self, row: str) -> str:
        return self.records[next(iter(self.rows[row]))].text

    def metadata(self, row: str) -> dict[str, str]:
        """A row's metadata: the owner (the agent, or PUBLIC for its copies of public records), so the store can
        be audited by owner (in Chroma itself, say), and its records as one JSON string (one metadata key a
        field made reading a collection back five times slower: each key is a row per record in SQLite)."""
        owner = PUBLIC if row.startswith(PUBLIC_ROLE) else self.agent
        return {"owner": owner, "records": _pack(self.row_records(row))}

    def private(self) -> list[MemoryRecord]:
        """The agent's own records, sorted by id."""
        return sorted((r for i, r in self.records.items() if i not in self.public), key=lambda r: r.id)

    def public_records(self) -> list[MemoryRecord]:
        return sorted((self.records[i] for i in self.public), key=lambda r: r.id)
