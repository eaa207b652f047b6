"""Thin timing wrappers around one benchmarked memory's parts (embedder, collections, index query, the search of
an agent's held vectors, record lookup, rank), so the memory benchmark (see memory.py) can say where remember's and
recall's time goes without touching the package's files."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memory_store import chroma_index
from memory_timing import Timer

from amphoreus_graph.memory import remembrance as remembrance_module
from amphoreus_graph.memory.chroma_index import ChromaIndex
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.text_rows import HeldCollection


class TimedEmbedder:
    """The real embedder, timed (Remembrance only calls `encode`)."""

    def __init__(self, inner: Any, timer: Timer) -> None:
        self._inner = inner
        self._timer = timer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def encode(self, texts: list[str]) -> Any:
        with self._timer.measure("embed"):
            return self._inner.encode(texts)


class TimedCollection:
    """A Chroma collection whose count/query/update/upsert calls are timed under `<role>.<method>`."""

    def __init__(self, inner: Any, role: str, timer: Timer) -> None:
        self._inner = inner
        self._role = role
        self._timer = timer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in ("count", "query", "update", "upsert"):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self._timer.measure(f"{self._role}.{name}"):
                return attr(*args, **kwargs)

        return timed


@contextmanager
def instrumented(memory: Remembrance, timer: Timer) -> Iterator[None]:
    """Time the parts of recall/remember on this one memory object (the package's files are left untouched)."""
    index = chroma_index(memory)
    embedder, rows = memory.embedder, index._collection(*memory.agents)
    original_rank, original_nearest = remembrance_module.rank, HeldCollection.nearest

    def timed_query(owner: str, vector: Any, n: int, *, exact: bool = False) -> Any:
        with timer.measure("index.query"):
            return ChromaIndex.query(index, owner, vector, n, exact=exact)

    def timed_resolve(owner: str, hits: list[tuple[str, float]]) -> Any:
        with timer.measure("_resolve"):
            return Remembrance._resolve(memory, owner, hits)

    def timed_rank(*args: Any, **kwargs: Any) -> Any:
        with timer.measure("rank"):
            return original_rank(*args, **kwargs)

    def timed_nearest(held: HeldCollection, query: Any, n: int) -> Any:
        with timer.measure("held.nearest"):
            return original_nearest(held, query, n)

    memory.embedder = TimedEmbedder(embedder, timer)  # type: ignore[assignment]
    index._rows = TimedCollection(rows, "own", timer)  # type: ignore[assignment]
    index.query = timed_query  # type: ignore[method-assign]
    memory._resolve = timed_resolve  # type: ignore[method-assign, assignment]
    remembrance_module.rank = timed_rank  # type: ignore[assignment]
    HeldCollection.nearest = timed_nearest  # type: ignore[method-assign]
    try:
        yield
    finally:
        remembrance_module.rank, HeldCollection.nearest = original_rank, original_nearest  # type: ignore[method-assign]
        del index.query, memory._resolve
        memory.embedder, index._rows = embedder, rows
