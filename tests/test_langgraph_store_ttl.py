"""ChromaStore's TTL: expiry on put (per item or the config's default), refresh on read, omit_expired, sweeping.

The clock is faked (the store reads `time.time_ns`), so nothing here waits; LangGraph's own TTL suites, which do
wait, run against ChromaStore in tests/langgraph_store_suite/.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, PutOp

from amphoreus_graph.memory.chroma_index import open_chroma
from amphoreus_graph.memory.langgraph_store import ChromaStore

MINUTE_NS = 60 * 10**9


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Stops time at now; calling it moves time on by that many minutes."""
    now = [time.time_ns()]
    monkeypatch.setattr(time, "time_ns", lambda: now[0])

    def advance(minutes: float) -> None:
        now[0] += round(minutes * MINUTE_NS)

    return advance


def keys(items: list[Any]) -> list[str]:
    return [item.key for item in items]


def test_an_item_expires_after_its_ttl_and_a_sweep_deletes_it(clock: Callable[[float], None]) -> None:
    store = ChromaStore(index={"dims": 2, "embed": lambda texts: [[1.0, float(len(t))] for t in texts]})
    store.put(("docs",), "brief", {"text": "gone soon"}, ttl=1)
    store.put(("docs",), "kept", {"text": "stays"})
    clock(0.5)
    assert store.sweep_ttl() == 0
    clock(1)
    assert store.sweep_ttl() == 1
    assert store.get(("docs",), "brief") is None
    assert keys(store.search(("docs",))) == ["kept"]
    assert store.chroma.items.count() == 1 and store.chroma.rows.count() == 1  # its text row went with it
    assert store.sweep_ttl() == 0


def test_the_configs_default_ttl_applies_unless_a_put_says_otherwise(clock: Callable[[float], None]) -> None:
    store = ChromaStore(ttl={"default_ttl": 2})
    store.put(("docs",), "default", {"v": 1})
    store.put(("docs",), "short", {"v": 2}, ttl=1)
    store.put(("docs",), "forever", {"v": 3}, ttl=None)
    store.batch([PutOp(("docs",), "raw", {"v": 4})])  # a raw op carries its own ttl (None), as in LangGraph
    clock(1.5)
    assert store.sweep_ttl() == 1
    clock(1)
    assert store.sweep_ttl() == 1
    assert sorted(keys(store.search(("docs",)))) == ["forever", "raw"]


@pytest.mark.parametrize("read", ["get", "search"])
def test_reading_refreshes_the_ttl_unless_told_not_to(clock: Callable[[float], None], read: str) -> None:
    store = ChromaStore(ttl={"default_ttl": 1})
    store.put(("docs",), "read", {"v": 1})
    store.put(("docs",), "unread", {"v": 2})
    clock(0.75)
    if read == "get":
        assert store.get(("docs",), "read") is not None
        assert store.get(("docs",), "unread", refresh_ttl=False) is not None
    else:
        assert keys(store.search(("docs",), filter={"v": 1})) == ["read"]
        assert keys(store.search(("docs",), filter={"v": 2}, refresh_ttl=False)) == ["unread"]
    clock(0.5)
    assert store.sweep_ttl() == 1
    assert keys(store.search(("docs",))) == ["read"]


def test_refresh_on_read_false_in_the_config_keeps_reads_from_refreshing(clock: Callable[[float], None]) -> None:
    store = ChromaStore(ttl={"default_ttl": 1, "refresh_on_read": False})
    store.put(("docs",), "k", {"v": 1})
    clock(0.75)
    assert store.get(("docs",), "k") is not None
    assert store.get(("docs",), "k", refresh_ttl=True) is not None  # an explicit refresh still refreshes
    clock(0.75)
    assert store.sweep_ttl() == 0


def test_omit_expired_hides_unswept_items_from_every_read(clock: Callable[[float], None]) -> None:
    store = ChromaStore(ttl={"omit_expired": True})
    for key in ("a", "expired", "b", "c"):
        store.put(("page",), key, {"k": key}, ttl=10 if key != "expired" else 1)
    store.put(("gone",), "only", {"k": "x"}, ttl=1)
    clock(2)
    assert store.get(("page",), "expired") is None
    assert [keys(store.search(("page",), limit=2, offset=o)) for o in (0, 2)] == [["c", "b"], ["a"]]
    assert store.list_namespaces() == [("page",)]
    store.ttl_config["omit_expired"] = False  # type: ignore[index]  # read at each batch, as PostgresStore does
    assert store.get(("page",), "expired", refresh_ttl=False) is not None
    assert store.list_namespaces() == [("gone",), ("page",)]


def test_an_expired_item_is_not_refreshed_when_omitted(clock: Callable[[float], None]) -> None:
    store = ChromaStore(ttl={"omit_expired": True})
    store.put(("docs",), "k", {"v": 1}, ttl=1)
    clock(2)
    assert store.batch([GetOp(("docs",), "k", refresh_ttl=True)]) == [None]
    assert store.sweep_ttl() == 1


def test_ttls_survive_reopening_the_store(tmp_path: Path, clock: Callable[[float], None]) -> None:
    client, lock = open_chroma(tmp_path / "store")
    ChromaStore(client).put(("docs",), "k", {"v": 1}, ttl=1)
    reopened = ChromaStore(client)
    clock(0.5)
    assert reopened.get(("docs",), "k") is not None  # refreshed: written back to Chroma
    again = ChromaStore(client)
    clock(0.75)
    assert again.sweep_ttl() == 0
    clock(1)
    assert again.sweep_ttl() == 1
    assert ChromaStore(client).get(("docs",), "k") is None
    if lock is not None:
        lock.release()


def test_the_sweeper_thread_deletes_expired_items_until_stopped() -> None:
    store = ChromaStore(ttl={"default_ttl": 0.5 / 60, "sweep_interval_minutes": 0.1 / 60})
    store.put(("docs",), "k", {"v": 1})
    future = store.start_ttl_sweeper()
    deadline = time.monotonic() + 10
    while store.chroma.items.count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.chroma.items.count() == 0
    assert store.stop_ttl_sweeper(timeout=5) and future.done()
    assert ChromaStore().start_ttl_sweeper().done()  # no TTL config: nothing to sweep, nothing runs
