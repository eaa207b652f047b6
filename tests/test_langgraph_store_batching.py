"""Concurrent calls to a ChromaStore (async ones on a loop, sync ones from threads) run as one batch, and one bad
call fails only its caller."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langgraph.store.base import PutOp

from amphoreus_graph.memory.langgraph_store import ChromaStore


def counting(store: ChromaStore) -> list[int]:
    """The number of ops in each batch the store executes from now on."""
    sizes: list[int] = []
    execute = store._execute

    def counted(ops: list[Any], *args: Any) -> Any:
        sizes.append(len(ops))
        return execute(ops, *args)

    store._execute = counted  # type: ignore[method-assign]
    return sizes


def embed(texts: list[str]) -> list[list[float]]:
    return [[1.0, float(len(text)), float(sum(map(ord, text)) % 97)] for text in texts]


async def test_concurrent_calls_run_as_one_batch_and_each_gets_its_own_answer() -> None:
    store = ChromaStore(index={"dims": 3, "embed": embed, "fields": ["text"]})
    store.batch([PutOp(("docs", str(i % 3)), f"k{i}", {"text": f"note {i}", "i": i}) for i in range(30)])
    sizes = counting(store)
    got = await asyncio.gather(
        *(store.aget(("docs", str(i % 3)), f"k{i}") for i in range(30)),
        store.asearch(("docs", "1"), filter={"i": 4}),
        store.asearch(("docs",), query="note 7", limit=1),
        store.alist_namespaces(prefix=("docs",)),
        store.aput(("docs", "new"), "k", {"text": "fresh"}),
    )
    assert sizes == [34]
    assert [item.value["i"] for item in got[:30]] == list(range(30))
    assert [item.key for item in got[30]] == ["k4"]
    assert [item.key for item in got[31]] == ["k7"]
    assert got[32] == [("docs", "0"), ("docs", "1"), ("docs", "2")]  # reads see the batch's store before its puts
    assert (await store.aget(("docs", "new"), "k")) is not None
    assert sizes == [34, 1]


async def test_a_failing_call_fails_alone() -> None:
    store = ChromaStore()
    await store.aput(("docs",), "k", {"n": 1})
    bad, good, write = await asyncio.gather(
        store.asearch(("docs",), filter={"n": {"$regex": "x"}}),
        store.aget(("docs",), "k"),
        store.aput(("docs",), "other", {"n": 2}),
        return_exceptions=True,
    )
    assert isinstance(bad, ValueError) and "Unsupported operator" in str(bad)
    assert good is not None and good.value == {"n": 1} and write is None
    assert (await store.aget(("docs",), "other")) is not None


async def test_a_cancelled_call_leaves_the_others_and_the_store_working() -> None:
    store = ChromaStore()
    cancelled = asyncio.ensure_future(store.aput(("docs",), "never", {"v": 0}))
    kept = asyncio.ensure_future(store.aput(("docs",), "kept", {"v": 1}))
    await asyncio.sleep(0)
    cancelled.cancel()
    await kept
    assert await store.aget(("docs",), "kept") is not None
    with pytest.raises(asyncio.CancelledError):
        await cancelled


def test_one_store_serves_event_loops_in_many_threads_and_sync_callers() -> None:
    store = ChromaStore()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        async def run() -> None:
            await asyncio.gather(*(store.aput(("t", str(n)), f"k{i}", {"i": i}) for i in range(20)))
            assert len(await store.asearch(("t", str(n)), limit=50)) == 20

        try:
            asyncio.run(run())
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list_namespaces()) == 4


async def test_sync_calls_still_work_inside_a_running_loop() -> None:
    """Unlike AsyncBatchedBaseStore, ChromaStore does not refuse them (they block the loop, as any sync call)."""
    store = ChromaStore()
    store.put(("docs",), "k", {"v": 1})
    assert store.get(("docs",), "k") is not None
    assert (await store.aget(("docs",), "k")) is not None


def calls_while_busy(store: ChromaStore, calls: list[Any]) -> list[Any]:
    """Make each call from a thread of its own while the store is busy (its batch lock held here) until all are
    queued; then let them go. Returns each call's result or exception."""
    results: list[Any] = [None] * len(calls)

    def worker(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as error:
            results[i] = error

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    with store._threads._store:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(store._threads._queued) < len(calls) and time.monotonic() < deadline:
            time.sleep(0.005)
    for thread in threads:
        thread.join()
    return results


def test_sync_calls_of_threads_that_wait_for_the_store_run_as_one_batch() -> None:
    store = ChromaStore()
    store.batch([PutOp(("docs",), f"k{i}", {"i": i}) for i in range(8)])
    sizes = counting(store)
    calls = [lambda i=i: store.get(("docs",), f"k{i}") for i in range(8)]
    calls += [lambda: store.put(("docs",), "new", {"i": 99}), lambda: store.search(("docs",), filter={"i": 3})]
    got = calls_while_busy(store, calls)
    assert sizes == [10], "ten threads' calls, one pass over the store"
    assert [item.value["i"] for item in got[:8]] == list(range(8))
    assert [item.key for item in got[9]] == ["k3"]
    assert store.get(("docs",), "new").value == {"i": 99}
    assert sizes == [10, 1], "a call made after the others returned runs on its own"


def test_a_failing_sync_call_fails_only_its_thread() -> None:
    store = ChromaStore()
    store.put(("docs",), "k", {"n": 1})
    bad, good, write = calls_while_busy(
        store,
        [
            lambda: store.search(("docs",), filter={"n": {"$regex": "x"}}),
            lambda: store.get(("docs",), "k"),
            lambda: store.put(("docs",), "other", {"n": 2}),
        ],
    )
    assert isinstance(bad, ValueError) and good.value == {"n": 1} and write is None
    assert store.get(("docs",), "other").value == {"n": 2}
