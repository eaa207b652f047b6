"""Chroma-backed memory: one collection per (society, agent), so an agent's recall never scans others.

Privacy is structural: an agent's queries only ever touch its own collection, which holds its private records and
a copy of each public one (owner PUBLIC). Collection names come from each exact name (naming.py), so agents whose
names differ in any way never share one, and no agent's name can produce the store's own collections. Writes are
upserts of rows keyed by text (text_rows.py) holding records keyed by event and owner, and retention marks what
it has already carried, so replaying a round or a cycle end after a crash changes nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlparse

import chromadb
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings
from chromadb.errors import NotFoundError

from amphoreus_graph.catalogs.scenario import MemoryConfig, Retention, RetentionMode
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.embedder import Embedder
from amphoreus_graph.memory.importance import ImportanceRater
from amphoreus_graph.memory.naming import agent_collection, internal_collection, legacy_collection_name
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.reflection import OfflineReflector, Reflector, reflection_event, salient
from amphoreus_graph.memory.scoring import rank
from amphoreus_graph.memory.text_rows import HeldCollection, access_id


def _settings() -> Settings:
    """Fresh settings per client: chromadb's client constructors mutate the object they are given."""
    return Settings(anonymized_telemetry=False, allow_reset=False)


class Memory(Protocol):
    """What the society needs from memory; ChromaMemory is the real one, NullMemory remembers nothing."""

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]: ...

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]: ...

    def touch(self, record_ids: list[str], now: Moment) -> None: ...

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]: ...

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]: ...


class NullMemory:
    """Remembers nothing: for measuring what the framework costs without memory."""

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        return {}

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]:
        return {agent: [] for agent in queries}

    def touch(self, record_ids: list[str], now: Moment) -> None:
        return None

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        return []

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        return {agent: 0 for agent in retention}


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


def collection_name(society: str, agent: str) -> str:
    """An agent's Chroma collection: a readable slug plus a hash of each exact name (see naming.py)."""
    return agent_collection(society, agent)


def describe_store(client: ClientAPI) -> str:
    """Where a client's data lives, for error messages: a directory, a server, or memory."""
    settings = client.get_settings()
    if settings.chroma_server_host:
        return f"Chroma server {settings.chroma_server_host}:{settings.chroma_server_http_port}"
    return str(settings.persist_directory) if settings.is_persistent else "in-memory Chroma"


class _BaseImportance:
    """Without a rater every witness keeps the event's base importance."""

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        return {e.id: {w: e.importance for w in e.witnesses} for e in events}


class ChromaMemory:
    """One collection per agent, in one Chroma client, holding one row (one vector) per distinct text.

    Every event text is embedded once per batch. A public event is filed in every agent's collection (as a
    public copy), in the same upsert as that agent's private records of the round, so recall is one similarity
    query on the asking agent's collection, not two, and a round still makes one write per agent. Records that
    share a text share a row (text_rows.py): identical vectors would degrade Chroma's HNSW index until a search
    misses exact matches. Recall over-fetches rows, ranks every record of them (see scoring.py), and falls back
    to an exact scan if Chroma ever answers with fewer rows than it holds and was asked for. Chroma holds
    everything and answers every similarity search; each agent's records are also held in this process once
    first read (one `get`) and kept in step with every write, so recall asks Chroma only for ids and distances,
    and reflection and retention never re-read a collection. One process writes a store at a time (StoreLock),
    so what is held cannot go stale.
    """

    def __init__(
        self,
        client: ClientAPI,
        society: str,
        agents: list[str],
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
        self.reflector: Reflector = reflector or OfflineReflector(agents)
        self._lock = lock
        self.agents = list(dict.fromkeys(agents))
        self._refuse_legacy_store()
        self._collections = {agent: self._collection(agent) for agent in self.agents}
        self._held: dict[str, HeldCollection] = {}  # agent -> its collection as held here, once read
        self._max_batch = client.get_max_batch_size()
        # Last-accessed ticks live apart from the records: one write per round for all agents, not one per agent.
        self._access = self._access_collection()

    def _refuse_legacy_store(self) -> None:
        """Versions before identity-safe names slugged names into `m-<society>--<agent>` and always created
        `m-<society>--access`: such a store would look empty under the new names, so it is refused, untouched."""
        for name in (legacy_collection_name(self.society, "access"), legacy_collection_name(self.society, "public")):
            try:
                self.client.get_collection(name, embedding_function=None)
            except (NotFoundError, ValueError):
                continue
            raise AmphoreusError(
                f"{describe_store(self.client)}: memory of society {self.society!r} was written by an older "
                f"amphoreus-graph (collection {name!r}) whose storage names could mix up agents; expected a store "
                "written by this version (start a fresh --memory-dir, or a new --out; nothing was changed)"
            )

    def _collection(self, agent: str) -> Collection:
        return self.client.get_or_create_collection(
            collection_name(self.society, agent),
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
        )

    def _access_collection(self) -> Collection:
        return self.client.get_or_create_collection(
            internal_collection(self.society, "access"), embedding_function=None
        )

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def drop(self) -> None:
        """Delete this society's collections (a throwaway society's, such as a benchmark item's)."""
        for collection in [*self._collections.values(), self._access]:
            self.client.delete_collection(collection.name)
        self._collections, self._held = {}, {}

    def clear(self) -> None:
        """Forget every memory of this society and go on with empty collections (a `--fresh-memory` start)."""
        self.drop()
        self._collections = {agent: self._collection(agent) for agent in self.agents}
        self._access = self._access_collection()

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        """File each event for each witness (public ones for every agent); returns the importance each agent gained
        from its private records."""
        events = [e for e in events if e.public or any(w in self._collections for w in e.witnesses)]
        if not events:
            return {}
        ratings = self.rater.rate([e for e in events if not e.public])
        vectors = self.embedder.encode([e.text for e in events])
        by_text: dict[str, list[float]] = {}
        filed: dict[str, list[tuple[MemoryRecord, bool]]] = {}
        for event, vector in zip(events, vectors.tolist(), strict=True):
            by_text[event.text] = vector
            if event.public:
                record = MemoryRecord.of(event, PUBLIC, event.importance)
                for agent in self.agents:
                    filed.setdefault(agent, []).append((record, True))
                continue
            for agent in dict.fromkeys(event.witnesses):
                if agent in self._collections:
                    filed.setdefault(agent, []).append((MemoryRecord.of(event, agent, ratings[event.id][agent]), False))
        for agent, batch in filed.items():
            self.file(agent, batch, by_text)
        gained = {agent: sum(r.importance for r, public in batch if not public) for agent, batch in filed.items()}
        return {agent: weight for agent, weight in gained.items() if weight}

    def file(self, agent: str, batch: list[tuple[MemoryRecord, bool]], vectors: Mapping[str, list[float]]) -> None:
        """Write records (each with whether it is a public copy) into an agent's collection: one upsert of the rows
        they change, each row with all the records of its text; `vectors` has each new text's embedding. A record
        filed again keeps its last access (as a fresh read would)."""
        held = self._records_of(agent)
        touched: set[str] = set()
        for record, public in batch:
            before = held.records.get(record.id)
            touched |= held.put(record if before is None else _accessed(record, before.last_accessed), public)
        self._write_rows(agent, touched, vectors)

    def _write_rows(self, agent: str, rows: set[str], vectors: Mapping[str, list[float]]) -> None:
        """Bring an agent's rows in Chroma in line with what is held: rows left empty go first, then the others
        (with their vector when this write has it, else metadata only). Deleting first keeps a replay after a
        crash exact: what retention already dropped never comes back."""
        held, collection = self._held[agent], self._collections[agent]
        gone = sorted(r for r in rows if r not in held.rows)
        kept = sorted(r for r in rows if r in held.rows)
        fresh = [r for r in kept if held.text(r) in vectors]
        stale = [r for r in kept if held.text(r) not in vectors]
        for chunk in _chunks(gone, self._max_batch):
            collection.delete(ids=chunk)
        for chunk in _chunks(fresh, self._max_batch):
            collection.upsert(
                ids=chunk,
                documents=[held.text(r) for r in chunk],
                metadatas=[held.metadata(r) for r in chunk],  # type: ignore[misc]
                embeddings=[vectors[held.text(r)] for r in chunk],  # type: ignore[arg-type]
            )
        for chunk in _chunks(stale, self._max_batch):
            collection.update(ids=chunk, metadatas=[held.metadata(r) for r in chunk])  # type: ignore[misc]

    def recall(self, queries: dict[str, str], k: int, now: Moment) -> dict[str, list[RecalledMemory]]:
        """Each agent's k best memories for its query: its own records and public ones, never another's.

        Read-only: the caller marks what was used with `touch` (the society does it with the round's writes)."""
        found: dict[str, list[RecalledMemory]] = {h: [] for h in queries}
        agents = [h for h in queries if h in self._collections]
        if not agents or k <= 0:
            return found
        # No count() first: Chroma answers an oversized n_results with what it has.
        vectors = self.embedder.encode([queries[h] for h in agents]).tolist()
        n = k * self.config.overfetch
        for agent, vector in zip(agents, vectors, strict=True):
            collection = self._collections[agent]
            hits = self._query(collection, [vector], n)[0]
            candidates = self._resolve(agent, hits)
            held = self._held[agent]
            if len(hits) < min(n, len(held.rows)):  # the index came back short: rank every row exactly instead
                hits = self._exact(collection, vector, n)
                candidates = self._resolve(agent, hits)
                held = self._held[agent]
            found[agent] = [_as_public(m, m.id in held.public) for m in rank(candidates, now, self.config, k)]
        return found

    def touch(self, record_ids: list[str], now: Moment) -> None:
        """Mark private records as recalled at `now` (recency counts from last access); one write for all.

        A record is marked for the agent that holds it privately (public copies have no last access of their
        own); ids are matched against the records held, never parsed for an owner."""
        ids = list(dict.fromkeys(record_ids))
        marks: list[str] = []
        # Agents already read first (recall reads the asking agent); the others only if some id is still unmatched,
        # e.g. ids a resumed run's checkpoint carried over from before the restart.
        order = sorted(self.agents, key=lambda agent: agent not in self._held)
        unmatched = set(ids)
        for agent in order:
            if not unmatched:
                break
            held = self._records_of(agent)
            for record_id in ids:
                record = held.records.get(record_id)
                if record is None:
                    continue
                unmatched.discard(record_id)  # a public copy is found too: it has no last access of its own
                if record_id not in held.public:
                    marks.append(access_id(agent, record_id))
                    held.records[record_id] = _accessed(record, now.tick)
        for chunk in _chunks(marks, self._max_batch):
            self._access.upsert(
                ids=chunk,
                embeddings=[placeholder_vector(i) for i in chunk],  # type: ignore[arg-type]
                metadatas=[{"tick": now.tick}] * len(chunk),
            )

    def _access_ticks(self, ids: list[str]) -> dict[str, int]:
        """When each record was last recalled, by access id (absent: never since it was filed)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(dict.fromkeys(ids)), self._max_batch):
            got = self._access.get(ids=chunk, include=["metadatas"])
            out.update((i, int(m["tick"])) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True) if m)  # type: ignore[arg-type]
        return out

    @staticmethod
    def _query(collection: Collection, vectors: list[list[float]], n: int) -> list[list[tuple[str, float]]]:
        """(row id, cosine similarity) of the n nearest rows per vector: the records are held here."""
        result = collection.query(query_embeddings=vectors, n_results=n, include=["distances"])  # type: ignore[arg-type]
        return [
            [(i, 1.0 - float(dist)) for i, dist in zip(ids, dists, strict=True)]
            for ids, dists in zip(result["ids"], result["distances"] or [], strict=True)
        ]

    @staticmethod
    def _exact(collection: Collection, vector: list[float], n: int) -> list[tuple[str, float]]:
        """The n nearest rows by cosine similarity over every row: the fallback when the index answers short."""
        got = collection.get(include=["embeddings"])
        if not got["ids"]:
            return []
        matrix = np.asarray(got["embeddings"], dtype=np.float64)
        query = np.asarray(vector, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        similarity = (matrix @ query) / np.where(norms == 0, 1.0, norms)
        order = np.argsort(-similarity, kind="stable")[:n]
        return [(got["ids"][i], float(similarity[i])) for i in order]

    def _resolve(self, agent: str, hits: list[tuple[str, float]]) -> list[tuple[MemoryRecord, float]]:
        """Every record of each hit row, with the row's similarity."""
        held = self._records_of(agent)
        if any(row not in held.rows for row, _ in hits):  # written by someone else since it was read: read again
            held = self._records_of(agent, reread=True)
        records = held.records
        return [(records[i], similarity) for row, similarity in hits for i in held.rows.get(row, ())]

    def _records_of(self, agent: str, *, reread: bool = False) -> HeldCollection:
        """One agent's collection as held here: read from Chroma (with last access) on first use, then kept."""
        if reread or agent not in self._held:
            got = self._collections[agent].get(include=["documents", "metadatas"])
            self._held[agent] = HeldCollection.read(
                agent, got["ids"], got["documents"] or [], got["metadatas"] or [], self._access_ticks
            )
        return self._held[agent]

    def records(self, owner: str) -> list[MemoryRecord]:
        """Every private record of one agent, or (owner PUBLIC, when no agent has that name) every public record,
        sorted by id."""
        if owner in self._collections:
            return self._records_of(owner).private()
        if owner == PUBLIC:
            return self.public_records()
        raise KeyError(owner)

    def public_records(self) -> list[MemoryRecord]:
        """Every public record (each agent holds a copy), sorted by id."""
        public = {r.id: r for agent in self.agents for r in self._records_of(agent).public_records()}
        return sorted(public.values(), key=lambda r: r.id)

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        """Each named agent reflects on its most salient memories; the reflections are remembered."""
        events = []
        for agent in agents:
            observed = [r for r in self.records(agent) if r.kind is not MemoryKind.REFLECTION]
            evidence = salient(observed, self.config.reflection_evidence)
            if evidence:
                insight, cites = self.reflector.reflect(agent, self.paths.get(agent, "Remembrance"), evidence)
                events.append(reflection_event(agent, insight, cites, evidence, now))
        self.remember(events)
        return events

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        """Apply each agent's retention at a world reset (public news goes, public seeds stay); returns private
        records kept per agent."""
        kept: dict[str, int] = {}
        for agent in self.agents:
            rule = retention.get(agent, Retention(mode=RetentionMode.ALL))
            held = self._records_of(agent)
            records = held.private()
            if rule.mode is RetentionMode.ALL:
                keep = records
            else:
                ranked = sorted(records, key=lambda r: (-r.importance, r.id))
                keep = ranked[: rule.keep] if rule.mode is RetentionMode.ECHOES else []
            forgotten = sorted({r.id for r in records} - {r.id for r in keep})
            news = [r.id for r in held.public_records() if r.kind is not MemoryKind.SEED]
            touched = {row for record_id in [*forgotten, *news] if (row := held.remove(record_id)) is not None}
            for record in keep:
                if record.carried_to < next_cycle and rule.mode is not RetentionMode.ALL:
                    decayed = record.model_copy(
                        update={"importance": max(1.0, record.importance * rule.decay), "carried_to": next_cycle}
                    )
                    touched |= held.put(decayed, public=False)
            self._write_rows(agent, touched, {})
            for chunk in _chunks([access_id(agent, i) for i in forgotten], self._max_batch):
                self._access.delete(ids=chunk)
            if agent in retention:
                kept[agent] = len(keep)
        return kept

    def dump(self) -> dict[str, Any]:
        """Every record: each agent's own (by agent) and the public ones, sorted by id; for tests and inspection.
        Public records sit apart from the agents' because an agent may be named like the public owner."""
        return {
            "agents": {agent: [r.model_dump(mode="json") for r in self.records(agent)] for agent in self.agents},
            "public": [r.model_dump(mode="json") for r in self.public_records()],
        }


def placeholder_vector(record_id: str) -> list[float]:
    """Chroma wants a vector per record, even one never searched; identical vectors degrade its HNSW index, so
    each id gets its own four values in [1, 2] (never zero) from a hash."""
    digest = hashlib.sha256(record_id.encode()).digest()
    return [1.0 + b / 255 for b in digest[:4]]


def _as_public(memory: RecalledMemory, public: bool) -> RecalledMemory:
    """A recalled memory flagged public exactly when it is a public copy (not when its owner's name merely
    equals the public owner's)."""
    return memory if memory.public == public else memory.model_copy(update={"public": public})


def _chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _accessed(record: MemoryRecord, tick: int) -> MemoryRecord:
    """The record, last accessed at `tick` if that is later than it says."""
    return record if tick <= record.last_accessed else record.model_copy(update={"last_accessed": tick})
