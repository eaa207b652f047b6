"""The storage seam under Remembrance: a RecordIndex keeps one society's rows, one index per owner (an agent).

Remembrance (remembrance.py) decides what a row holds (text_rows.py: one row per distinct text, its records
packed in the metadata) and never reads anything but rows of one owner at a time, so an agent's recall never
sees another agent's index: privacy is by identity, for whatever an index does with the name. Writes come a
round at a time (`write`: every owner's changes together), so a backend can make them one request.
An index also keeps two small side stores: the last-access tick of each record (by access id, apart from the
rows so that a round's recalls make one write for all agents) and the claim of the run that owns the society.

Backends: chroma_index.ChromaIndex (embedded or a server; the default) and inmemory_index.InMemoryIndex
(numpy, exact; tests and throwaway societies); a MemoryBackend opens a store's indexes, chosen by a memory URL
(backends.py). amphoreus_graph.testing pins what any backend must do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Rows:
    """Rows of one owner's index: ids, texts, metadata and vectors, aligned."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    metadatas: list[dict[str, str]] = field(default_factory=list)
    vectors: Sequence[Sequence[float]] = field(default_factory=list)


@dataclass(frozen=True)
class RowChanges:
    """One owner's part of a write: rows deleted, rows written whole (replacing those with the same ids, each with
    its vector), and rows that exist whose metadata alone changes (`updated`: ids and metadatas only)."""

    owner: str
    deleted: Sequence[str] = ()
    written: Rows = field(default_factory=Rows)
    updated: Rows = field(default_factory=Rows)

    def __bool__(self) -> bool:
        return bool(self.deleted or self.written.ids or self.updated.ids)


class RecordIndex(Protocol):
    """Storage of one society's rows, per owner. Every read names one owner and sees only its index; empty
    changes write nothing; an owner never written reads as empty."""

    @property
    def society(self) -> str: ...

    @property
    def exclusive(self) -> bool:
        """Whether nothing else can write this index while it is open (an embedded store this index has locked),
        so a copy of its rows held by its one user cannot go stale."""
        ...

    def write(self, changes: Sequence[RowChanges]) -> None:
        """Apply the owners' changes, each owner's to its own index only: deletes, then rows written, then
        metadata updates of rows that exist (their texts and vectors stay)."""
        ...

    def get(self, owner: str, *, vectors: bool = False) -> Rows:
        """Every row of the owner's index (any order); with `vectors`, each row's vector too (else none)."""
        ...

    def query(self, owner: str, vector: Sequence[float], n: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """(row id, cosine similarity) of the n rows nearest `vector`, nearest first. An approximate index may
        answer short; `exact` asks it to rank every row instead (the caller knows how many rows there are)."""
        ...

    def ticks(self, keys: Sequence[str]) -> dict[str, int]:
        """The last-access tick stored for each key (absent: none stored)."""
        ...

    def set_ticks(self, keys: Sequence[str], tick: int) -> None: ...

    def forget_ticks(self, keys: Sequence[str]) -> None: ...

    def claim(self) -> str | None:
        """The society's claim (who owns its memories), as `set_claim` stored it; None if there is none."""
        ...

    def set_claim(self, value: str | None) -> None:
        """Store the society's claim (None: remove it)."""
        ...

    def drop(self, owners: Sequence[str]) -> None:
        """Delete the owners' indexes and every tick (the claim stays): the society's memories are gone."""
        ...

    def close(self) -> None:
        """Let go of the store (an embedded directory's lock); the index is not used afterwards."""
        ...


class MemoryBackend(Protocol):
    """A store of societies' memories, as a memory URL names it (backends.py): it opens each society's index."""

    def open_index(self, society: str, *, shared: bool = False) -> RecordIndex:
        """The society's index in this store; a store that cannot be opened is one AmphoreusError line. `shared`:
        several runs of this process use the store at once (Studio); a backend without per-process clients may
        ignore it."""
        ...


def nearest(
    ids: Sequence[str], vectors: Sequence[Sequence[float]] | NDArray[np.floating], query: Sequence[float], n: int
) -> list[tuple[str, float]]:
    """The n rows nearest `query` by exact cosine similarity (a zero vector is similar to nothing), nearest first,
    ties in the order given: the exact scan any backend may fall back on."""
    if not ids:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    target = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(target)
    similarity = (matrix @ target) / np.where(norms == 0, 1.0, norms)
    order = np.argsort(-similarity, kind="stable")[:n]
    return [(ids[i], float(similarity[i])) for i in order]
