"""Chroma-backed memory: one collection per (society, heir), so a heir's recall never scans others.

Privacy is structural: a heir's queries only ever touch its own collection, which holds its private records and
a copy of each public one (owner PUBLIC). Writes are upserts keyed by event and owner, and retention marks what
it has already carried, so replaying a round or a cycle end after a crash changes nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings
from chromadb.errors import NotFoundError

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.embedder import Embedder
from amphoreus_graph.memory.importance import ImportanceRater
from amphoreus_graph.memory.records import PUBLIC, MemoryEvent, MemoryKind, MemoryRecord, Moment
from amphoreus_graph.memory.reflection import OfflineReflector, Reflector, reflection_event, salient
from amphoreus_graph.memory.scoring import rank
from amphoreus_graph.policy.base import RecalledMemory
from amphoreus_graph.scenario import MemoryConfig, Retention, RetentionMode


def _settings() -> Settings:
    """Fresh settings per client: chromadb's client constructors mutate the object they are given."""
    return Settings(anonymized_telemetry=False, allow_reset=False)


class Memory(Protocol):
    """What the society needs from memory; ChromaMemory is the real one, NullMemory remembers nothing."""

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]: ...

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]: ...

    def touch(self, record_ids: list[str], now: Moment) -> None: ...

    def reflect(self, heirs: list[str], now: Moment) -> list[MemoryEvent]: ...

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]: ...


class NullMemory:
    """Remembers nothing: for measuring what the framework costs without memory."""

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        return {}

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]:
        return {heir: [] for heir in queries}

    def touch(self, record_ids: list[str], now: Moment) -> None:
        return None

    def reflect(self, heirs: list[str], now: Moment) -> list[MemoryEvent]:
        return []

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
            host=parsed.hostname, port=parsed.port or 8000, ssl=parsed.scheme == "https", settings=_settings()
        )
        return client, None
    if persist_dir is None:
        return chromadb.EphemeralClient(settings=_settings()), None
    lock = StoreLock(persist_dir)
    return chromadb.PersistentClient(path=str(persist_dir), settings=_settings()), lock


def collection_name(society: str, heir: str) -> str:
    """A Chroma-legal collection name (3-512 chars of [a-zA-Z0-9._-], alphanumeric at both ends)."""
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "-", f"{society}--{heir}").strip("-_")
    return f"m-{slug}"[:500]


class _BaseImportance:
    """Without a rater every witness keeps the event's base importance."""

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        return {e.id: {w: e.importance for w in e.witnesses} for e in events}


class ChromaMemory:
    """One collection per heir, in one Chroma client.

    Every event text is embedded once per batch. A public event is filed in every heir's collection (owner
    PUBLIC), in the same upsert as that heir's private records of the round, so recall is one similarity query
    on the asking heir's collection, not two, and a round still makes one write per heir. Recall over-fetches,
    then ranks (see scoring.py). Chroma holds everything and answers every similarity search; each heir's
    records are also held in this process once first read (one `get`) and kept in step with every write, so
    recall asks Chroma only for ids and distances, and reflection and retention never re-read a collection.
    One process writes a store at a time (StoreLock), so what is held cannot go stale.
    """

    def __init__(
        self,
        client: ClientAPI,
        society: str,
        heirs: list[str],
        embedder: Embedder,
        lock: StoreLock | None = None,
        *,
        config: MemoryConfig | None = None,
        paths: dict[str, str] | None = None,
        rater: ImportanceRater | None = None,
        reflector: Reflector | None = None,
    ) -> None:
        self.client = client
        self.society = society
        self.embedder = embedder
        self.config = config or MemoryConfig()
        self.paths = paths or {}
        self.rater: ImportanceRater = rater or _BaseImportance()
        self.reflector: Reflector = reflector or OfflineReflector(heirs)
        self._lock = lock
        self.heirs = list(heirs)
        self._collections = {heir: self._collection(heir) for heir in self.heirs}
        self._held: dict[str, dict[str, MemoryRecord]] = {}  # heir -> record id -> record, once read
        # Last-accessed ticks live apart from the records: one write per round for all heirs, not one per heir.
        self._access = client.get_or_create_collection(collection_name(society, "access"), embedding_function=None)
        self._adopt_public_collection()

    def _adopt_public_collection(self) -> None:
        """Stores written before public records were copied to every heir kept them in a collection of their own:
        copy them over once, so a resumed older run loses nothing, then drop that collection."""
        name = collection_name(self.society, "public")
        if name in {c.name for c in self._collections.values()}:  # a heir called "public" owns that name
            return
        try:
            legacy = self.client.get_collection(name, embedding_function=None)
        except NotFoundError:
            return
        got = legacy.get(include=["documents", "metadatas", "embeddings"])
        if got["ids"]:
            for collection in self._collections.values():
                collection.upsert(
                    ids=got["ids"], documents=got["documents"], metadatas=got["metadatas"], embeddings=got["embeddings"]
                )
        self.client.delete_collection(name)

    def _collection(self, heir: str) -> Collection:
        return self.client.get_or_create_collection(
            collection_name(self.society, heir),
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
        )

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def drop(self) -> None:
        """Delete this society's collections (a throwaway society's, such as a benchmark item's)."""
        for collection in [*self._collections.values(), self._access]:
            self.client.delete_collection(collection.name)
        self._collections, self._held = {}, {}

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        """File each event for each witness (public ones for every heir); returns the importance each heir gained
        from its private records."""
        events = [e for e in events if e.public or any(w in self._collections for w in e.witnesses)]
        if not events:
            return {}
        ratings = self.rater.rate([e for e in events if not e.public])
        vectors = self.embedder.encode([e.text for e in events])
        rows: dict[str, list[tuple[MemoryRecord, list[float]]]] = {}
        for event, vector in zip(events, vectors.tolist(), strict=True):
            if event.public:
                record = MemoryRecord.of(event, PUBLIC, event.importance)
                for heir in self.heirs:
                    rows.setdefault(heir, []).append((record, vector))
                continue
            for heir in dict.fromkeys(event.witnesses):
                if heir in self._collections:
                    record = MemoryRecord.of(event, heir, ratings[event.id][heir])
                    rows.setdefault(heir, []).append((record, vector))
        for heir, batch in rows.items():
            self._collections[heir].upsert(
                ids=[r.id for r, _ in batch],
                documents=[r.text for r, _ in batch],
                metadatas=[r.metadata() for r, _ in batch],  # type: ignore[misc]
                embeddings=[v for _, v in batch],  # type: ignore[arg-type]
            )
            if (held := self._held.get(heir)) is not None:
                for record, _ in batch:  # a record filed again keeps its last access (as a fresh read would)
                    before = held.get(record.id)
                    held[record.id] = record if before is None else _accessed(record, before.last_accessed)
        gained = {heir: sum(r.importance for r, _ in batch if r.owner == heir) for heir, batch in rows.items()}
        return {heir: weight for heir, weight in gained.items() if weight}

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]:
        """Each heir's k best memories for its query: its own records and public ones, never another's.

        Read-only: the caller marks what was used with `touch` (the society does it with the round's writes)."""
        found: dict[str, list[RecalledMemory]] = {h: [] for h in queries}
        heirs = [h for h in queries if h in self._collections]
        if not heirs or k <= 0:
            return found
        # No count() first: Chroma answers an oversized n_results with what it has.
        vectors = self.embedder.encode([queries[h] for h in heirs]).tolist()
        for heir, vector in zip(heirs, vectors, strict=True):
            hits = self._query(self._collections[heir], [vector], k * self.config.overfetch)[0]
            found[heir] = rank(self._resolve(heir, hits), now, self.config, k)
        return found

    def touch(self, record_ids: list[str], now: Moment) -> None:
        """Mark private records as recalled at `now` (recency counts from last access); one write for all."""
        ids = [i for i in dict.fromkeys(record_ids) if not i.endswith(f"@{PUBLIC}")]
        if ids:
            self._access.upsert(
                ids=ids,
                embeddings=[placeholder_vector(i) for i in ids],  # type: ignore[arg-type]
                metadatas=[{"tick": now.tick}] * len(ids),
            )
            for record_id in ids:  # a private record's id ends with its owner
                held = self._held.get(record_id.rpartition("@")[2], {})
                if (record := held.get(record_id)) is not None:
                    held[record_id] = _accessed(record, now.tick)

    def _access_ticks(self, ids: list[str]) -> dict[str, int]:
        """When each record was last recalled (absent: never since it was filed)."""
        if not ids:
            return {}
        got = self._access.get(ids=list(dict.fromkeys(ids)), include=["metadatas"])
        return {i: int(m["tick"]) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True) if m}  # type: ignore[arg-type]

    @staticmethod
    def _query(collection: Collection, vectors: list[list[float]], n: int) -> list[list[tuple[str, float]]]:
        """(record id, cosine similarity) of the n nearest records per vector: the records are held here."""
        result = collection.query(query_embeddings=vectors, n_results=n, include=["distances"])  # type: ignore[arg-type]
        return [
            [(i, 1.0 - float(dist)) for i, dist in zip(ids, dists, strict=True)]
            for ids, dists in zip(result["ids"], result["distances"] or [], strict=True)
        ]

    def _resolve(self, heir: str, hits: list[tuple[str, float]]) -> list[tuple[MemoryRecord, float]]:
        held = self._records_of(heir)
        if any(i not in held for i, _ in hits):  # written by someone else since it was read: read it again
            held = self._records_of(heir, reread=True)
        return [(held[i], similarity) for i, similarity in hits if i in held]

    def _records_of(self, heir: str, *, reread: bool = False) -> dict[str, MemoryRecord]:
        """Everything in one heir's collection by id: read from Chroma (with last access) on first use, then held."""
        if reread or heir not in self._held:
            got = self._collections[heir].get(include=["documents", "metadatas"])
            ticks = self._access_ticks([i for i in got["ids"] if not i.endswith(f"@{PUBLIC}")])
            rows = zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
            records = (MemoryRecord.from_chroma(i, d, dict(m or {}), ticks.get(i)) for i, d, m in rows)
            self._held[heir] = {r.id: r for r in records}
        return self._held[heir]

    def records(self, owner: str) -> list[MemoryRecord]:
        """Every private record of one heir, or (owner PUBLIC) every public record, sorted by id."""
        if owner != PUBLIC:
            return sorted((r for r in self._records_of(owner).values() if r.owner == owner), key=lambda r: r.id)
        public = {r.id: r for heir in self.heirs for r in self._records_of(heir).values() if r.owner == PUBLIC}
        return sorted(public.values(), key=lambda r: r.id)

    def reflect(self, heirs: list[str], now: Moment) -> list[MemoryEvent]:
        """Each named heir reflects on its most salient memories; the reflections are remembered."""
        events = []
        for heir in heirs:
            observed = [r for r in self.records(heir) if r.kind is not MemoryKind.REFLECTION]
            evidence = salient(observed, self.config.reflection_evidence)
            if evidence:
                insight, cites = self.reflector.reflect(heir, self.paths.get(heir, "Remembrance"), evidence)
                events.append(reflection_event(heir, insight, cites, evidence, now))
        self.remember(events)
        return events

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        """Apply each heir's retention at a world reset (public news goes, public seeds stay); returns private
        records kept per heir."""
        kept: dict[str, int] = {}
        for heir in self.heirs:
            rule = retention.get(heir, Retention(mode=RetentionMode.ALL))
            held = self._records_of(heir)
            records = self.records(heir)
            if rule.mode is RetentionMode.ALL:
                keep = records
            else:
                ranked = sorted(records, key=lambda r: (-r.importance, r.id))
                keep = ranked[: rule.keep] if rule.mode is RetentionMode.ECHOES else []
            news = [r.id for r in held.values() if r.owner == PUBLIC and r.kind is not MemoryKind.SEED]
            drop = sorted(({r.id for r in records} - {r.id for r in keep}) | set(news))
            if drop:
                self._collections[heir].delete(ids=drop)
                self._access.delete(ids=drop)
                for record_id in drop:
                    del held[record_id]
            decay = [r for r in keep if r.carried_to < next_cycle and rule.mode is not RetentionMode.ALL]
            if decay:
                decayed = [
                    r.model_copy(update={"importance": max(1.0, r.importance * rule.decay), "carried_to": next_cycle})
                    for r in decay
                ]
                self._collections[heir].update(
                    ids=[r.id for r in decayed],
                    metadatas=[r.metadata() for r in decayed],  # type: ignore[misc]
                )
                held.update({r.id: r for r in decayed})
            if heir in retention:
                kept[heir] = len(keep)
        return kept

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every record per owner (each heir, then PUBLIC), sorted by id: for tests and inspection."""
        return {owner: [r.model_dump(mode="json") for r in self.records(owner)] for owner in [*self.heirs, PUBLIC]}


def placeholder_vector(record_id: str) -> list[float]:
    """Chroma wants a vector per record, even one never searched; identical vectors degrade its HNSW index, so
    each id gets its own four values in [1, 2] (never zero) from a hash."""
    digest = hashlib.sha256(record_id.encode()).digest()
    return [1.0 + b / 255 for b in digest[:4]]


def _accessed(record: MemoryRecord, tick: int) -> MemoryRecord:
    """The record, last accessed at `tick` if that is later than it says."""
    return record if tick <= record.last_accessed else record.model_copy(update={"last_accessed": tick})
