"""Chroma-backed memory: one collection per (society, heir), so a heir's recall never scans others.

Privacy is structural: a heir's queries only ever touch its own collection. Writes are upserts keyed by
event and owner, and retention marks what it has already carried, so replaying a round or a cycle end
after a crash changes nothing.
"""

from __future__ import annotations

import fcntl
import re
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.config import Settings

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.embedder import Embedder
from amphoreus_graph.memory.records import MemoryEvent, MemoryRecord
from amphoreus_graph.policy.base import RecalledMemory
from amphoreus_graph.scenario import Retention, RetentionMode

_SETTINGS = Settings(anonymized_telemetry=False, allow_reset=False)


class Memory(Protocol):
    """What the society needs from memory; ChromaMemory is the real one, NullMemory remembers nothing."""

    def remember(self, events: list[MemoryEvent]) -> int: ...

    def recall(self, queries: dict[str, str], k: int) -> dict[str, list[RecalledMemory]]: ...

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]: ...


class NullMemory:
    """Remembers nothing: for measuring what the framework costs without memory."""

    def remember(self, events: list[MemoryEvent]) -> int:
        return 0

    def recall(self, queries: dict[str, str], k: int) -> dict[str, list[RecalledMemory]]:
        return {heir: [] for heir in queries}

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        return {heir: 0 for heir in retention}


class StoreLock:
    """An exclusive lock on a persist directory: one simulation writes to it at a time.

    Local Chroma is not process-safe; the OS drops the lock when its holder dies, so `kill -9` is fine.
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "amphoreus.lock"
        self._file: IO[str] | None = open(self.path, "a+")  # noqa: SIM115 - held for the store's life
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            self._file = None
            raise AmphoreusError(
                f"{directory}: memory store is in use by another running simulation; "
                "expected a free directory (wait for it to finish or pass another --memory-dir)"
            ) from None

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def open_chroma(persist_dir: Path | None = None, url: str | None = None) -> tuple[ClientAPI, StoreLock | None]:
    """A Chroma client: a server (`url`), an embedded persistent store (locked), or an in-memory one."""
    if url is not None:
        parsed = urlparse(url)
        if not parsed.hostname:
            raise AmphoreusError(f"--chroma-url {url!r}: expected http://HOST:PORT")
        client = chromadb.HttpClient(
            host=parsed.hostname, port=parsed.port or 8000, ssl=parsed.scheme == "https", settings=_SETTINGS
        )
        return client, None
    if persist_dir is None:
        return chromadb.EphemeralClient(settings=_SETTINGS), None
    lock = StoreLock(persist_dir)
    return chromadb.PersistentClient(path=str(persist_dir), settings=_SETTINGS), lock


def collection_name(society: str, heir: str) -> str:
    """A Chroma-legal collection name (3-512 chars of [a-zA-Z0-9._-], alphanumeric at both ends)."""
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "-", f"{society}--{heir}").strip("-_")
    return f"m-{slug}"[:500]


class ChromaMemory:
    """Per-heir collections in one Chroma client; every text is embedded once per batch."""

    def __init__(
        self,
        client: ClientAPI,
        society: str,
        heirs: list[str],
        embedder: Embedder,
        lock: StoreLock | None = None,
    ) -> None:
        self.client = client
        self.society = society
        self.embedder = embedder
        self._lock = lock
        self._collections = {
            heir: client.get_or_create_collection(
                collection_name(society, heir),
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
            )
            for heir in heirs
        }

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def remember(self, events: list[MemoryEvent]) -> int:
        """File each event for each of its witnesses; returns the number of records written."""
        events = [e for e in events if any(w in self._collections for w in e.witnesses)]
        if not events:
            return 0
        vectors = self.embedder.encode([e.text for e in events])
        per_heir: dict[str, list[tuple[MemoryRecord, list[float]]]] = {}
        for event, vector in zip(events, vectors, strict=True):
            for witness in dict.fromkeys(event.witnesses):
                if witness in self._collections:
                    per_heir.setdefault(witness, []).append((MemoryRecord.of(event, witness), vector.tolist()))
        for heir, rows in per_heir.items():
            self._collections[heir].upsert(
                ids=[r.id for r, _ in rows],
                documents=[r.text for r, _ in rows],
                metadatas=[r.metadata() for r, _ in rows],  # type: ignore[misc]
                embeddings=[v for _, v in rows],  # type: ignore[arg-type]
            )
        return sum(len(rows) for rows in per_heir.values())

    def recall(self, queries: dict[str, str], k: int) -> dict[str, list[RecalledMemory]]:
        """Each heir's k most similar memories to its query, from its own collection only."""
        found: dict[str, list[RecalledMemory]] = {h: [] for h in queries}
        heirs = [h for h in queries if h in self._collections and k > 0 and self._collections[h].count() > 0]
        if not heirs:
            return found
        vectors = self.embedder.encode([queries[h] for h in heirs])
        for heir, vector in zip(heirs, vectors, strict=True):
            result = self._collections[heir].query(
                query_embeddings=[vector.tolist()], n_results=k, include=["documents", "metadatas", "distances"]
            )
            found[heir] = [
                RecalledMemory(text=doc, cycle=int(meta["cycle"]), round=int(meta["round"]), score=1.0 - dist)
                for doc, meta, dist in zip(
                    _first(result["documents"]), _first(result["metadatas"]), _first(result["distances"]), strict=True
                )
            ]
        return found

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        """Apply each heir's retention at a world reset; returns how many records each heir keeps."""
        kept: dict[str, int] = {}
        for heir, rule in retention.items():
            collection = self._collections[heir]
            got = collection.get(include=["metadatas"])
            ids, metas = got["ids"], got["metadatas"] or []
            if rule.mode is RetentionMode.ALL:
                kept[heir] = len(ids)
                continue
            ranked = sorted(zip(ids, metas, strict=True), key=lambda im: (-_num(im[1]["importance"]), im[0]))
            keep = ranked[: rule.keep] if rule.mode is RetentionMode.ECHOES else []
            drop = [i for i, _ in ranked[len(keep) :]]
            if drop:
                collection.delete(ids=drop)
            to_decay = [(i, m) for i, m in keep if _num(m.get("carried_to", 0)) < next_cycle]
            if to_decay:
                collection.update(
                    ids=[i for i, _ in to_decay],
                    metadatas=[
                        {**m, "importance": max(1.0, _num(m["importance"]) * rule.decay), "carried_to": next_cycle}
                        for _, m in to_decay
                    ],
                )
            kept[heir] = len(keep)
        return kept

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every record per heir, sorted by id: for tests and inspection."""
        out: dict[str, list[dict[str, Any]]] = {}
        for heir, collection in self._collections.items():
            got = collection.get(include=["documents", "metadatas"])
            rows = [
                {"id": i, "text": d, **(m or {})}
                for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
            ]
            out[heir] = sorted(rows, key=lambda r: r["id"])
        return out


def _num(value: Any) -> float:
    """Chroma types metadata values loosely; ours are always numbers where this is used."""
    return float(value)


def _first(batch: Any) -> list[Any]:
    return list(batch[0]) if batch else []
