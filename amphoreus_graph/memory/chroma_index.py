"""The Chroma backend of RecordIndex: one collection per (society, agent), so an agent's recall never scans others.

Collection names come from each exact name (naming.py), so agents whose names differ in any way never share
one, and no agent's name can produce the store's own collections (the access ticks, the owner's claim). Writes
are chunked to the client's max batch; the ticks' rows carry placeholder vectors (Chroma wants one per row).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import urlparse

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.collection_configuration import CreateCollectionConfiguration, CreateHNSWConfiguration
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Include, Space
from chromadb.config import Settings
from chromadb.errors import NotFoundError

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.index import Rows, nearest
from amphoreus_graph.memory.naming import agent_collection, internal_collection

_CLAIM_KEY = "amphoreus_owner"  # the claim collection's metadata key

# Chroma persists a collection's HNSW index every `sync_threshold` writes to it (default 1000) and keeps its write log
# until every collection has: until then each write costs more the longer the log (5 → 20 ms per single-row upsert
# over 12 collections and 10,000 rows, quadratic over a run). A society writes one collection per agent a round, so
# that log spans hundreds of rounds; syncing every 10 writes keeps each write at its 5 ms from the first cycle to
# the tenth (benchmarks/chroma_writes.py). Applied to collections made before too, on open.
SYNC_THRESHOLD = 10


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


def describe_store(client: ClientAPI) -> str:
    """Where a client's data lives, for error messages: a directory, a server, or memory."""
    settings = client.get_settings()
    if settings.chroma_server_host:
        return f"Chroma server {settings.chroma_server_host}:{settings.chroma_server_http_port}"
    return str(settings.persist_directory) if settings.is_persistent else "in-memory Chroma"


class ChromaIndex:
    """One society's rows in one Chroma client: a collection per owner, one for the access ticks, one whose
    metadata holds the claim. Collections are made on first use; `lock` (an embedded directory's) is released
    by `close`."""

    def __init__(self, client: ClientAPI, society: str, lock: StoreLock | None = None) -> None:
        self.client = client
        self._society = society
        self._lock = lock
        self._collections: dict[str, Collection] = {}  # owner -> its collection, once opened
        self._access: Collection | None = None
        self._max_batch = client.get_max_batch_size()

    @property
    def society(self) -> str:
        return self._society

    @property
    def exclusive(self) -> bool:
        return self._lock is not None

    def _collection(self, owner: str) -> Collection:
        if owner not in self._collections:
            self._collections[owner] = self._open(agent_collection(self.society, owner), space="cosine")
        return self._collections[owner]

    def _ticks(self) -> Collection:
        if self._access is None:
            self._access = self._open(internal_collection(self.society, "access"))
        return self._access

    def _open(self, name: str, space: Space | None = None) -> Collection:
        return open_collection(self.client, name, space)

    def upsert(
        self,
        owner: str,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[dict[str, str]],
        vectors: Sequence[Sequence[float]],
    ) -> None:
        for span in _spans(len(ids), self._max_batch):
            self._collection(owner).upsert(
                ids=list(ids[span]),
                documents=list(texts[span]),
                metadatas=list(metadatas[span]),  # type: ignore[arg-type]
                embeddings=[list(v) for v in vectors[span]],  # type: ignore[arg-type]
            )

    def update(self, owner: str, ids: Sequence[str], metadatas: Sequence[dict[str, str]]) -> None:
        for span in _spans(len(ids), self._max_batch):
            self._collection(owner).update(ids=list(ids[span]), metadatas=list(metadatas[span]))  # type: ignore[arg-type]

    def delete(self, owner: str, ids: Sequence[str]) -> None:
        for chunk in chunks(ids, self._max_batch):
            self._collection(owner).delete(ids=chunk)

    def get(self, owner: str, *, vectors: bool = False) -> Rows:
        wanted: Include = ["documents", "metadatas", "embeddings"] if vectors else ["documents", "metadatas"]
        got = self._collection(owner).get(include=wanted)
        metadatas = cast(list[dict[str, str]], got["metadatas"] or [])  # rows written by `upsert`
        embeddings = cast(Sequence[Sequence[float]], got["embeddings"] if got["embeddings"] is not None else [])
        return Rows(list(got["ids"]), list(got["documents"] or []), metadatas, embeddings)

    def query(self, owner: str, vector: Sequence[float], n: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """HNSW's answer (similarity = 1 - cosine distance), or with `exact` every row ranked by cosine."""
        collection = self._collection(owner)
        if exact:
            got = collection.get(include=["embeddings"])
            return nearest(got["ids"], got["embeddings"], vector, n)  # type: ignore[arg-type]
        result = collection.query(query_embeddings=[list(vector)], n_results=n, include=["distances"])  # type: ignore[arg-type]
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], (result["distances"] or [[]])[0], strict=True)]

    def ticks(self, keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(list(dict.fromkeys(keys)), self._max_batch):
            got = self._ticks().get(ids=chunk, include=["metadatas"])
            out.update((i, int(m["tick"])) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True) if m)  # type: ignore[arg-type]
        return out

    def set_ticks(self, keys: Sequence[str], tick: int) -> None:
        for chunk in chunks(keys, self._max_batch):
            self._ticks().upsert(
                ids=chunk,
                embeddings=[placeholder_vector(i) for i in chunk],  # type: ignore[arg-type]
                metadatas=[{"tick": tick}] * len(chunk),
            )

    def forget_ticks(self, keys: Sequence[str]) -> None:
        for chunk in chunks(keys, self._max_batch):
            self._ticks().delete(ids=chunk)

    def claim(self) -> str | None:
        try:
            metadata = self.client.get_collection(self._claim_name(), embedding_function=None).metadata or {}
        except NotFoundError:
            return None
        value = metadata.get(_CLAIM_KEY)
        return value if isinstance(value, str) else None

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

    def drop(self, owners: Sequence[str]) -> None:
        names = [agent_collection(self.society, o) for o in owners] + [internal_collection(self.society, "access")]
        for name in names:
            try:
                self.client.delete_collection(name)
            except (NotFoundError, ValueError):
                continue
        self._collections, self._access = {}, None

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()


def open_collection(client: ClientAPI, name: str, space: Space | None = None) -> Collection:
    """A collection, made (with `space`, default l2) if missing, syncing its index every SYNC_THRESHOLD writes."""
    hnsw = CreateHNSWConfiguration(sync_threshold=SYNC_THRESHOLD)
    if space is not None:
        hnsw["space"] = space
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
