"""The store factory LangGraph's vendored suites run with: the names of the stores they tested, building ChromaStores.

Each class keeps the constructor the suite calls (`InMemoryStore(index=...)`, `SqliteStore.from_conn_string(...)`,
`PostgresStore.from_conn_string(...)` and their async twins, with `setup()`) and is a ChromaStore underneath:
":memory:" is a private in-memory client, anything else an embedded store in a directory beside that path. The
async twins only make the TTL calls awaitable, as AsyncSqliteStore and AsyncPostgresStore have them. The helpers at
the end stand in for the SQL the Postgres suites run on their table: they read and move an item's expiry where
ChromaStore keeps it (in process and in Chroma's metadata). `MockerFixture` is pytest-mock's `spy`, which the
reference suite uses and this project does not install.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import unittest.mock
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from amphoreus_graph.memory.chroma_index import open_chroma
from amphoreus_graph.memory.langgraph_store import ChromaStore


class InMemoryStore(ChromaStore):
    """ChromaStore with InMemoryStore's constructor."""

    def __init__(self, *, index: Any = None) -> None:
        super().__init__(index=index)


@contextmanager
def _opened(cls: type[ChromaStore], conn_string: str, index: Any, ttl: Any) -> Iterator[Any]:
    """A store at `conn_string`: in memory for ":memory:", else embedded in `<conn_string>.chroma/` (locked,
    removed afterwards, as the suites remove their files)."""
    if conn_string == ":memory:":
        yield cls(index=index, ttl=ttl)
        return
    directory = Path(f"{conn_string}.chroma")
    client, lock = open_chroma(directory)
    try:
        yield cls(client, index=index, ttl=ttl)
    finally:
        if lock is not None:
            lock.release()
        shutil.rmtree(directory, ignore_errors=True)


class SqliteStore(ChromaStore):
    """ChromaStore with SqliteStore's `from_conn_string` and `setup`."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, *, index: Any = None, ttl: Any = None) -> Iterator[SqliteStore]:
        with _opened(cls, conn_string, index, ttl) as store:
            yield store

    def setup(self) -> None:
        """ChromaStore makes its collections when it opens."""


class PostgresStore(SqliteStore):
    """ChromaStore with PostgresStore's `from_conn_string` (psycopg's `pipeline`, `pool_config`: nothing here)."""

    @classmethod
    @contextmanager
    def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, index: Any = None, ttl: Any = None, pipeline: bool = False, pool_config: Any = None
    ) -> Iterator[PostgresStore]:
        with _opened(cls, conn_string, index, ttl) as store:
            yield store


class AsyncSqliteStore(ChromaStore):
    """ChromaStore with AsyncSqliteStore's async `from_conn_string`, `setup` and TTL calls."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None, **_: Any
    ) -> AsyncIterator[AsyncSqliteStore]:
        with _opened(cls, conn_string, index, ttl) as store:
            yield store

    async def setup(self) -> None:
        """ChromaStore makes its collections when it opens."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await asyncio.to_thread(ChromaStore.sweep_ttl, self)

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:  # type: ignore[override]
        return asyncio.wrap_future(ChromaStore.start_ttl_sweeper(self, sweep_interval_minutes))

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        return await asyncio.to_thread(ChromaStore.stop_ttl_sweeper, self, timeout)


AsyncPostgresStore = AsyncSqliteStore


def expire_now(store: ChromaStore, namespace: tuple[str, ...], key: str) -> None:
    """An item's expiry a minute ago, without deleting it (what `_expire_now`'s UPDATE does to a row)."""
    entry = store._catalog.get(namespace, key)
    assert entry is not None
    entry.expires_us = time.time_ns() // 1000 - 60_000_000
    store.chroma.set_expiry([(entry, entry.expires_us)])


def row_exists(store: ChromaStore, namespace: tuple[str, ...], key: str) -> bool:
    entry = store._catalog.get(namespace, key)
    return entry is not None and bool(store.chroma.items.get(ids=[entry.id])["ids"])


def stored_expires_at(store: ChromaStore, namespace: tuple[str, ...], key: str) -> datetime:
    """The expiry Chroma holds for an item (so a refresh is seen only once it is written)."""
    entry = store._catalog.get(namespace, key)
    assert entry is not None
    meta = (store.chroma.items.get(ids=[entry.id], include=["metadatas"])["metadatas"] or [{}])[0]
    return datetime.fromtimestamp(int(meta["expires_us"]) / 1e6, tz=UTC)


class MockerFixture:
    """pytest-mock's `mocker`, as far as the reference suite uses it: `spy` records calls (with `self`) and runs
    the real method. Patches are undone by the `mocker` fixture in conftest.py."""

    def __init__(self) -> None:
        self._patches: list[Any] = []

    def spy(self, owner: Any, name: str) -> Any:
        patcher = unittest.mock.patch.object(owner, name, autospec=True, side_effect=getattr(owner, name))
        self._patches.append(patcher)
        return patcher.start()

    def stopall(self) -> None:
        for patcher in reversed(self._patches):
            patcher.stop()
        self._patches.clear()
