"""The society's memory seam: what it needs (Memory), a memory that keeps nothing (NullMemory), and the one way
to open a Remembrance from a store: a typed MemorySpec (an embedded Chroma directory, a Chroma server, or this
process: the packaged backends) or any MemoryBackend a memory URL names (backends.py).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

from chromadb.api import ClientAPI
from chromadb.errors import ChromaError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from amphoreus_graph.catalogs.scenario import MemoryConfig
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.memory_seam import MEMORY_METHODS, Retention
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_index import ChromaIndex, StoreLock, open_chroma
from amphoreus_graph.memory.importance import ImportanceRater
from amphoreus_graph.memory.index import MemoryBackend, RecordIndex
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.rebuild import check_or_set_aside
from amphoreus_graph.memory.reflection import Reflector
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store_faults import full_disk
from amphoreus_graph.models.embedder import DEFAULT_MODEL, default_embedder


def check_memory(memory: object) -> None:
    """A memory of the caller's own must have every method the society calls (`stores` may be left out): one
    error line naming what is missing, before a run starts, not an AttributeError in the middle of a round."""
    missing = [name for name in MEMORY_METHODS if not callable(getattr(memory, name, None))]
    if missing:
        raise AmphoreusError(
            f"memory {type(memory).__name__}: lacks {', '.join(missing)}; expected every method of "
            "amphoreus_graph.contracts.memory_seam.Memory (NullMemory has each, doing nothing)"
        )


class NullMemory:
    """Remembers nothing: for measuring what the framework costs without memory (and no head starts: it is not
    `Prefetching`)."""

    stores = False

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        return {}

    def recall(
        self, queries: dict[str, str], k: int, now: Moment, pending: Sequence[MemoryEvent] = ()
    ) -> dict[str, list[RecalledMemory]]:
        return {agent: [] for agent in queries}

    def touch(self, used: Mapping[str, Sequence[str]], now: Moment) -> None:
        return None

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        return []

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        return {agent: 0 for agent in retention}


class MemorySpec(BaseModel):
    """Where a society's memories live and which embedder files them: an embedded Chroma `directory` (locked:
    one writer process), a Chroma server `url`, or neither: this process only (InMemoryIndex)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    directory: Path | None = Field(default=None, description="an embedded Chroma store")
    url: str | None = Field(default=None, description="a Chroma server, http://HOST:PORT")
    embedder: str = Field(default=DEFAULT_MODEL, description="sentence-transformers model name or path")
    scratch: bool = Field(default=False, description="a throwaway copy, read once: its write log is not compacted")

    @model_validator(mode="after")
    def _one_place(self) -> Self:
        if self.directory is not None and self.url is not None:
            raise ValueError("expected a directory or a url, not both")
        return self

    def open_index(self, society: str, *, shared: bool = False) -> RecordIndex:
        """The society's index in this store (MemoryBackend): see the module's `open_index`."""
        return open_index(self, society, shared=shared)


TEXTS_CACHED = 4096  # a society's embedder cache holds at least this many texts
TEXTS_PER_AGENT = 4  # ... and this many per agent


def open_memory(
    spec: MemoryBackend,
    society: str,
    agents: list[str],
    *,
    embedder: str | None = None,
    shared: bool = False,
    config: MemoryConfig | None = None,
    paths: dict[str, str] | None = None,
    rater: ImportanceRater | None = None,
    reflector: Reflector | None = None,
) -> Remembrance:
    """A society's Remembrance over its index in the store `spec` (see `open_index`), filed by `embedder` (default:
    a MemorySpec's own, else the default model)."""
    index = spec.open_index(society, shared=shared)
    try:
        model = embedder or (spec.embedder if isinstance(spec, MemorySpec) else DEFAULT_MODEL)
        # a cache of its own, holding a round's texts however large the society: its queries, the next round's
        # embedded ahead, its events (a fixed size would let the head start's vectors go before they are used)
        encoder = default_embedder(model).view(cache_size=max(TEXTS_CACHED, TEXTS_PER_AGENT * len(agents)))
    except BaseException:
        index.close()
        raise
    return Remembrance(index, agents, encoder, config=config, paths=paths, rater=rater, reflector=reflector)


def open_index(spec: MemorySpec, society: str, *, shared: bool = False) -> RecordIndex:
    """The society's index in the store `spec` names; a store that cannot be opened (damaged files, no server
    there, a directory another simulation holds) is one line. `shared`: through the process's one client of that
    store (Studio's runs share it; an embedded directory stays locked for the process's life), else a client of
    its own, whose lock `close` releases, unless this process holds the store already: then through that client,
    as one of its own would find the directory locked (an interview inside `langgraph dev`)."""
    if spec.directory is None and spec.url is None:
        if not shared:
            return InMemoryIndex(society)
        with _shared_lock:
            return _shared_in_memory.setdefault(society, InMemoryIndex(society))
    if shared or _held_in_process(spec):
        return ChromaIndex(_shared_client(spec), society)
    client, lock = open_client(spec)
    try:
        return ChromaIndex(client, society, lock)
    except BaseException:
        if lock is not None:
            lock.release()
        raise


def ready_to_open(spec: MemoryBackend, society: str, *, fresh_memory: bool) -> list[str]:
    """Before a run opens its store (and before `--fresh-memory` discards its checkpoint): an embedded directory
    is free and undamaged, or has its damaged indexes rebuilt from its write log, or (`fresh_memory`) is damaged
    and moved aside (rebuild.py); the lines saying what was done are returned. With `fresh_memory` a server must
    answer. A store that cannot be used is one line, and nothing is discarded. Another package's backend is checked
    when the run opens it."""
    if not isinstance(spec, MemorySpec):
        return []
    if spec.directory is not None:
        return check_or_set_aside(spec.directory, society, set_aside=fresh_memory)
    if spec.url is not None and fresh_memory:
        open_client(spec)
    return []


def open_client(spec: MemorySpec) -> tuple[ClientAPI, StoreLock | None]:
    """A client of the store `spec` names; a failure to open it is one line: a full disk under an embedded store
    is an outside fault (store_faults.full_disk), anything else a store to correct."""
    try:
        return open_chroma(spec.directory, spec.url, compact=not spec.scratch)
    except (AmphoreusError, ChromaError, ValueError, OSError) as exc:
        if spec.directory is not None and (fault := full_disk(str(spec.directory), spec.directory, exc)) is not None:
            raise fault from None
        if isinstance(exc, AmphoreusError):
            raise  # already one line: a damaged store, a directory in use
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        where = spec.url or spec.directory
        raise AmphoreusError(f"{where}: cannot open the memory store ({problem}); expected a Chroma store") from None


_shared_lock = threading.Lock()
_shared_clients: dict[tuple[Path | None, str | None], tuple[ClientAPI, StoreLock | None]] = {}
_shared_in_memory: dict[str, InMemoryIndex] = {}


def _shared_client(spec: MemorySpec) -> ClientAPI:
    key = _store_key(spec)
    with _shared_lock:
        if key not in _shared_clients:
            _shared_clients[key] = open_client(spec)  # its lock, if any, is held until the process ends
        return _shared_clients[key][0]


def _held_in_process(spec: MemorySpec) -> bool:
    with _shared_lock:
        return _store_key(spec) in _shared_clients


def held_in_process(directory: Path) -> bool:
    """Whether this process holds the embedded store in `directory` open through its one shared client."""
    return _held_in_process(MemorySpec(directory=directory))


def _store_key(spec: MemorySpec) -> tuple[Path | None, str | None]:
    return (spec.directory.resolve() if spec.directory is not None else None, spec.url)
