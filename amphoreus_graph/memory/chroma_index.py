"""The Chroma backend of RecordIndex: one collection of rows per society, each row naming the agent whose index it
is in, and every read filtered on that exact name.

One collection, not one per agent, because Chroma's cost is per call and per collection (~5 ms for a one-row
upsert, ~14 ms for twelve agents' rows in one): a round's filing is one upsert, not one per agent. A row's id
starts with the SHA-256 of its holder's exact name, so agents whose names differ in any way never share a row;
the store's own collections (the access ticks, the owner's claim) have names no agent's name can produce
(naming.py). Writes are chunked to the client's max batch; the ticks' rows carry placeholder vectors (Chroma
wants one per row). A row's vector is stored with its holder's tail (holder_tails.py), so that agents holding the
same text are not identical points in the collection's HNSW graph. Stores of the older layouts are moved over on
first use: one collection per agent (agent by agent), and the society's rows without tails (all at once).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Concatenate, ParamSpec, TypeVar, cast
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.client import Client
from chromadb.api.collection_configuration import CreateCollectionConfiguration, CreateHNSWConfiguration
from chromadb.api.models.Collection import Collection
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.api.types import Include, Space
from chromadb.config import Settings
from chromadb.errors import NotFoundError

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_check import check_store
from amphoreus_graph.memory.holder_tails import with_tail, without_tails
from amphoreus_graph.memory.index import RowChanges, Rows, nearest
from amphoreus_graph.memory.log_rebuild import compact_log, keep_whole_log
from amphoreus_graph.memory.naming import agent_collection, internal_collection, name_digest
from amphoreus_graph.memory.store_faults import store_faults

_log = logging.getLogger(__name__)
_CLAIM_KEY = "amphoreus_owner"  # the claim collection's metadata key
HOLDER = "amphoreus_holder"  # a row's metadata key: the agent whose index the row is in
_OWNER_HEX = 64  # a row key's leading hex digits: the holder's SHA-256

# Chroma persists a collection's HNSW index every `sync_threshold` writes to it (default 1000) and keeps its write log
# until every collection has: until then each write costs more the longer the log (5 → 20 ms per single-row upsert
# over 12 collections and 10,000 rows, quadratic over a run; benchmarks/chroma_writes.py). Syncing every 10 writes
# keeps each write at its first cost. Applied to collections made before too, on open.
SYNC_THRESHOLD = 10

# Neighbours per node of the rows collection's HNSW graph: Chroma's default. Agents who witness the same event (and,
# before the public index, every agent's copy of a public record) hold rows with the same vector; without holder
# tails (holder_tails.py) a search filtered to one agent got caught in those clusters at 16 (80 agents holding 80
# public texts: 40-50 of 480 searches missed), so 64 it was from 2026-11-26. With tails 16 misses nothing there
# (tests/test_memory.py; benchmarks/crowd_recall.py: recall@5 1.0), and at 10,000 agents 64 made Chroma's inserts
# ~5x dearer (docs/speed.md, stop 45). A collection keeps the setting it was made with.
ROW_NEIGHBORS = 16
ROWS, UNTAILED_ROWS = "tailedrows", "rows"  # the society's rows collection, and its name before holder tails


def _settings() -> Settings:
    """Fresh settings per client: chromadb's client constructors mutate the object they are given."""
    return Settings(anonymized_telemetry=False, allow_reset=False)


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

    @staticmethod
    def held(directory: Path) -> bool:
        """Whether a live process holds the lock on `directory`, found without writing anything there."""
        try:
            handle = open(directory / "amphoreus.lock")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return False
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def open_chroma(
    persist_dir: Path | None = None, url: str | None = None, *, compact: bool = True
) -> tuple[ClientAPI, StoreLock | None]:
    """A Chroma client: a server (`url`), an embedded persistent store (locked, its files checked before Chroma
    reads them: chroma_check.py, and its write log kept whole, for a damaged index to be rebuilt from, less what no
    rebuild needs unless not `compact`: log_rebuild.py), or an in-memory one."""
    if url is not None:
        parsed = urlparse(url)
        if not parsed.hostname:
            raise AmphoreusError(f"--chroma-url {url!r}: expected http://HOST:PORT")
        server = chromadb.HttpClient(
            host=parsed.hostname, port=parsed.port or 8000, ssl=parsed.scheme == "https", settings=_settings()
        )
        return server, None
    if persist_dir is None:
        return chromadb.EphemeralClient(settings=_settings()), None
    lock = StoreLock(persist_dir)
    client = None
    try:
        for line in check_store(persist_dir):  # under the lock: no one writes while it is read
            _log.warning(line)
        client = _persistent_client(persist_dir)
        keep_whole_log(persist_dir)
        if compact:
            compact_log(persist_dir)
        return client, lock
    except BaseException:
        if isinstance(client, Client):
            client.close()
        lock.release()
        raise


def _persistent_client(persist_dir: Path) -> ClientAPI:
    """An embedded client of the directory, by its absolute path (chromadb keeps one system per path string, and
    `memory` opened from two working directories would otherwise reach the first one's store). chromadb caches
    that system before starting it: one whose start failed (on a full disk) would be handed, broken, to every later
    client of the path in this process, so it is dropped."""
    path = os.path.abspath(persist_dir)
    before = SharedSystemClient._identifier_to_system.get(path)
    try:
        return chromadb.PersistentClient(path=path, settings=_settings())
    except BaseException:
        if SharedSystemClient._identifier_to_system.get(path) is not before:
            SharedSystemClient._identifier_to_system.pop(path, None)
            SharedSystemClient._identifier_to_refcount.pop(path, None)
        raise


def describe_store(client: ClientAPI) -> str:
    """Where a client's data lives, for error messages: a directory, a server, or memory."""
    settings = client.get_settings()
    if settings.chroma_server_host:
        return f"Chroma server {settings.chroma_server_host}:{settings.chroma_server_http_port}"
    return str(settings.persist_directory) if settings.is_persistent else "in-memory Chroma"


P = ParamSpec("P")
R = TypeVar("R")


def _faults_stop_the_run(
    method: Callable[Concatenate[ChromaIndex, P], R],
) -> Callable[Concatenate[ChromaIndex, P], R]:
    """A store call whose failure on the store's side (a full disk, a server gone) stops the run in one line
    (store_faults.py) instead of a traceback from inside a graph node."""

    @functools.wraps(method)
    def call(self: ChromaIndex, *args: P.args, **kwargs: P.kwargs) -> R:
        with store_faults(self.where, self._directory):
            return method(self, *args, **kwargs)

    return call


class ChromaIndex:
    """One society's rows in one Chroma client: one collection for every agent's rows (each row names its holder),
    one for the access ticks, one whose metadata holds the claim. Collections are made on first use; `lock` (an
    embedded directory's) is released by `close`. An agent's collection of the old layout is moved into the
    society's the first time this index touches the agent."""

    def __init__(self, client: ClientAPI, society: str, lock: StoreLock | None = None) -> None:
        self.client = client
        self._society = society
        self._lock = lock
        self._rows: Collection | None = None
        self._access: Collection | None = None
        self._moved: set[str] = set()  # owners whose old-layout collection is known to be gone
        self._max_batch = client.get_max_batch_size()
        self.where = describe_store(client)
        settings = client.get_settings()
        self._directory = Path(settings.persist_directory) if settings.is_persistent else None

    @property
    def society(self) -> str:
        return self._society

    @property
    def exclusive(self) -> bool:
        return self._lock is not None

    def _collection(self, *owners: str) -> Collection:
        """The society's rows, with these owners' rows of the old layout moved in."""
        if self._rows is None:
            name = internal_collection(self.society, ROWS)
            self._rows = open_collection(self.client, name, space="cosine", neighbors=ROW_NEIGHBORS)
            self._add_tails()
        for owner in owners:
            if owner not in self._moved:
                self._move_in(owner)
                self._moved.add(owner)
        return self._rows

    def _move_in(self, owner: str) -> None:
        """Copy an old-layout agent collection's rows into the society's, then delete it (a copy interrupted
        is copied again: the writes are idempotent, and the old collection goes only once they are done)."""
        assert self._rows is not None
        name = agent_collection(self.society, owner)
        old = self._existing(name)
        if old is None:
            return
        got = old.get(include=["documents", "metadatas", "embeddings"])
        metadatas = cast(list[dict[str, str]], got["metadatas"] or [])
        vectors = cast(Sequence[Sequence[float]], got["embeddings"] if got["embeddings"] is not None else [])
        rows = Rows(list(got["ids"]), list(got["documents"] or []), metadatas, vectors)
        self._upsert(self._rows, [(RowChanges(owner, written=rows), holder_prefix(owner))])
        self.client.delete_collection(name)

    def _add_tails(self) -> None:
        """Copy the rows of a collection written before holder tails into the society's, with their tails, then
        delete it (interrupted, it is copied again: the writes are idempotent, and it goes only once they are done)."""
        assert self._rows is not None
        name = internal_collection(self.society, UNTAILED_ROWS)
        old = self._existing(name)
        if old is None:
            return
        for start in range(0, old.count(), self._max_batch):
            got = old.get(include=["documents", "metadatas", "embeddings"], limit=self._max_batch, offset=start)
            metadatas = cast(list[dict[str, str]], got["metadatas"] or [])
            vectors = got["embeddings"] if got["embeddings"] is not None else []
            self._rows.upsert(
                ids=list(got["ids"]),
                documents=list(got["documents"] or []),
                metadatas=metadatas,  # type: ignore[arg-type]
                embeddings=[with_tail(v, m[HOLDER]) for v, m in zip(vectors, metadatas, strict=True)],  # type: ignore[arg-type]
            )
        self.client.delete_collection(name)

    def _existing(self, name: str) -> Collection | None:
        """A collection of an older layout, if the store still has it."""
        try:
            return self.client.get_collection(name, embedding_function=None)
        except (NotFoundError, ValueError):
            return None

    def _ticks(self) -> Collection:
        if self._access is None:
            self._access = open_collection(self.client, internal_collection(self.society, "access"))
        return self._access

    @_faults_stop_the_run
    def write(self, changes: Sequence[RowChanges]) -> None:
        changes = [c for c in changes if c]
        if not changes:
            return
        collection = self._collection(*(c.owner for c in changes))
        keyed = [(c, holder_prefix(c.owner)) for c in changes]
        gone = [prefix + row for c, prefix in keyed for row in c.deleted]
        for chunk in chunks(gone, self._max_batch):
            collection.delete(ids=chunk)
        self._upsert(collection, keyed)
        updated = [
            (prefix + row, _held(c.owner, metadata))
            for c, prefix in keyed
            for row, metadata in zip(c.updated.ids, c.updated.metadatas, strict=True)
        ]
        for chunk in chunks(updated, self._max_batch):
            ids, metadatas = zip(*chunk, strict=True)
            collection.update(ids=list(ids), metadatas=list(metadatas))  # type: ignore[arg-type]

    def _upsert(self, collection: Collection, keyed: Sequence[tuple[RowChanges, str]]) -> None:
        """Every owner's written rows, each change beside its owner's id prefix."""
        written = [
            (prefix + row, text, _held(c.owner, metadata), with_tail(vector, c.owner))
            for c, prefix in keyed
            for row, text, metadata, vector in zip(
                c.written.ids, c.written.texts, c.written.metadatas, c.written.vectors, strict=True
            )
        ]
        for chunk in chunks(written, self._max_batch):
            ids, texts, metadatas, vectors = zip(*chunk, strict=True)
            collection.upsert(
                ids=list(ids),
                documents=list(texts),
                metadatas=list(metadatas),  # type: ignore[arg-type]
                embeddings=list(vectors),  # type: ignore[arg-type]
            )

    @_faults_stop_the_run
    def get(self, owner: str, *, vectors: bool = False) -> Rows:
        wanted: Include = ["documents", "metadatas", "embeddings"] if vectors else ["documents", "metadatas"]
        got = self._collection(owner).get(where={HOLDER: owner}, include=wanted)
        metadatas = cast(list[dict[str, str]], got["metadatas"] or [])  # rows written by `write`
        stored = got["embeddings"] if vectors and got["embeddings"] is not None else []
        embeddings = cast(Sequence[Sequence[float]], without_tails(stored) if len(stored) else [])
        return Rows(
            [_row_of(i) for i in got["ids"]], list(got["documents"] or []), [_own(m) for m in metadatas], embeddings
        )

    @_faults_stop_the_run
    def query(self, owner: str, vector: Sequence[float], n: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """HNSW's answer among the owner's rows, or with `exact` every one of its rows, ranked by the exact cosine of
        the vectors as written (HNSW's float32 distances to tailed vectors would be a rounding off it)."""
        collection = self._collection(owner)
        if exact:
            got = collection.get(where={HOLDER: owner}, include=["embeddings"])
            ids, stored = got["ids"], got["embeddings"]
        else:
            found = collection.query(
                query_embeddings=[with_tail(vector, owner)],  # type: ignore[arg-type]
                n_results=n,
                where={HOLDER: owner},
                include=["embeddings"],
            )
            ids, stored = found["ids"][0], (found["embeddings"] or [[]])[0]
        rows = [_row_of(i) for i in ids]
        return nearest(rows, without_tails(stored if stored is not None else []), vector, n)

    @_faults_stop_the_run
    def ticks(self, keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(list(dict.fromkeys(keys)), self._max_batch):
            got = self._ticks().get(ids=chunk, include=["metadatas"])
            out.update((i, int(m["tick"])) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True) if m)  # type: ignore[arg-type]
        return out

    @_faults_stop_the_run
    def set_ticks(self, keys: Sequence[str], tick: int) -> None:
        for chunk in chunks(keys, self._max_batch):
            self._ticks().upsert(
                ids=chunk,
                embeddings=[placeholder_vector(i) for i in chunk],  # type: ignore[arg-type]
                metadatas=[{"tick": tick}] * len(chunk),
            )

    @_faults_stop_the_run
    def forget_ticks(self, keys: Sequence[str]) -> None:
        for chunk in chunks(keys, self._max_batch):
            self._ticks().delete(ids=chunk)

    @_faults_stop_the_run
    def claim(self) -> str | None:
        try:
            metadata = self.client.get_collection(self._claim_name(), embedding_function=None).metadata or {}
        except NotFoundError:
            return None
        value = metadata.get(_CLAIM_KEY)
        return value if isinstance(value, str) else None

    @_faults_stop_the_run
    def set_claim(self, value: str | None) -> None:
        if value is None:
            with contextlib.suppress(NotFoundError):
                self.client.delete_collection(self._claim_name())
            return
        metadata = {_CLAIM_KEY: value}
        collection = self.client.get_or_create_collection(
            self._claim_name(), embedding_function=None, metadata=metadata
        )
        if collection.metadata != metadata:
            collection.modify(metadata=metadata)

    def _claim_name(self) -> str:
        return internal_collection(self.society, "owner")

    @_faults_stop_the_run
    def drop(self, owners: Sequence[str]) -> None:
        old = [agent_collection(self.society, o) for o in owners]  # the old layout's, deleted rather than moved in
        for name in [*old, internal_collection(self.society, "access")]:
            with contextlib.suppress(NotFoundError, ValueError):
                self.client.delete_collection(name)
        self._moved.update(owners)
        self._access = None
        if owners:
            self._collection().delete(where={HOLDER: {"$in": list(owners)}})  # type: ignore[dict-item]

    def close(self) -> None:
        """An embedded store's own client is closed (chromadb otherwise keeps its system, and whatever state a
        failed write left it in, for the process's life: the next open of the directory would reuse it), then
        the directory's lock released."""
        if self._lock is not None:
            try:
                if isinstance(self.client, Client):
                    self.client.close()
            finally:
                self._lock.release()


def holder_prefix(owner: str) -> str:
    """What the ids of an owner's rows in the society's collection start with: the SHA-256 of its exact name (so
    no two names share a row, however they look); the row's own id follows."""
    return name_digest(owner)


def _row_of(key: str) -> str:
    return key[_OWNER_HEX:]


def _held(owner: str, metadata: dict[str, str]) -> dict[str, str]:
    """A row's metadata as stored: whose index it is in (what every read filters on) beside what Remembrance keeps."""
    return {**metadata, HOLDER: owner}


def _own(metadata: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in metadata.items() if k != HOLDER}


def open_collection(
    client: ClientAPI, name: str, space: Space | None = None, neighbors: int | None = None
) -> Collection:
    """A collection, made (with `space`, default l2, and `neighbors` per HNSW node, default Chroma's) if missing,
    syncing its index every SYNC_THRESHOLD writes."""
    hnsw = CreateHNSWConfiguration(sync_threshold=SYNC_THRESHOLD)
    if space is not None:
        hnsw["space"] = space
    if neighbors is not None:
        hnsw["max_neighbors"] = neighbors
    collection = client.get_or_create_collection(
        name, embedding_function=None, configuration=CreateCollectionConfiguration(hnsw=hnsw)
    )
    if (collection.configuration.get("hnsw") or {}).get("sync_threshold") != SYNC_THRESHOLD:
        collection.modify(configuration={"hnsw": {"sync_threshold": SYNC_THRESHOLD}})
    return collection


def placeholder_vector(record_id: str) -> list[float]:
    """Chroma wants a vector per record, even one never searched; identical vectors degrade its HNSW index, so
    each id gets its own four values in [1, 2] (never zero) from a hash."""
    digest = hashlib.sha256(record_id.encode()).digest()
    return [1.0 + b / 255 for b in digest[:4]]


def _spans(length: int, size: int) -> Iterator[slice]:
    """Slices of at most `size` items covering `length` (none for zero): the client's max batch per call."""
    for start in range(0, length, size):
        yield slice(start, start + size)


def chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    """Lists of at most `size` items (the client's max batch per call), in order."""
    for span in _spans(len(items), size):
        yield list(items[span])
