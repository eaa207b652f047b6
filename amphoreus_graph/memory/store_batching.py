"""Concurrent calls to a store run as one batch: LangGraph's `AsyncBatchedBaseStore` pattern, per event loop for
async calls, and the same for sync calls from many threads.

`aget`, `aput`, `asearch`... each call `abatch` with one op; a graph's parallel nodes make many such calls at once.
Calls made while a batch is queued or running join the next batch, so N concurrent reads cost one pass over the
store (one embedding call for their queries, one thread hop, one lock). Unlike `AsyncBatchedBaseStore` the store's
sync methods stay plain calls usable from any thread, and a store serves any number of event loops. Sync calls made
from several threads at once (a sync graph's parallel nodes) are combined the same way: whoever gets the store next
runs every call queued meanwhile, so N threads' puts cost one Chroma write. A call made after another returned is
never merged with it. If a merged batch fails, each call's ops run again alone, so one bad call fails only its
caller.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from langgraph.store.base import Op, Result

Run = Callable[[list[Op]], Awaitable[list[Result]]]
RunNow = Callable[[list[Op]], list[Result]]


@dataclass
class _Queue:
    calls: list[tuple[asyncio.Future[list[Result]], list[Op]]] = field(default_factory=list)
    drain: asyncio.Task[None] | None = None  # held here: the loop keeps only a weak reference to its tasks


class AsyncBatcher:
    """Gathers the ops of concurrent calls on one event loop into batches for `run`."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue] = weakref.WeakKeyDictionary()
        self._guard = threading.Lock()  # the dictionary is shared by the loops of all threads

    async def submit(self, ops: list[Op]) -> list[Result]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Result]] = loop.create_future()
        with self._guard:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = _Queue()
                queue.drain = loop.create_task(self._drain(loop, queue))
        queue.calls.append((future, ops))
        return await future

    async def _drain(self, loop: asyncio.AbstractEventLoop, queue: _Queue) -> None:
        """Run what has queued, again and again until nothing has; then the loop's next call starts a new drain."""
        try:
            while calls := [(f, ops) for f, ops in queue.calls if not f.done()]:
                queue.calls.clear()
                await self._answer(calls)
        finally:
            with self._guard:
                self._queues.pop(loop, None)
            for future, _ in queue.calls:  # only if the drain itself was cancelled
                future.cancel()

    async def _answer(self, calls: list[tuple[asyncio.Future[list[Result]], list[Op]]]) -> None:
        merged = [op for _, ops in calls for op in ops]
        try:
            results = await self._run(merged)
        except Exception as error:
            if len(calls) == 1:
                _settle(calls[0][0], error=error)
                return
            for future, ops in calls:  # find whose call failed (a caller that gave up meanwhile is not run)
                if future.done():
                    continue
                try:
                    _settle(future, results=await self._run(ops))
                except Exception as own:
                    _settle(future, error=own)
            return
        start = 0
        for future, ops in calls:
            _settle(future, results=results[start : start + len(ops)])
            start += len(ops)


def _settle(
    future: asyncio.Future[list[Result]], *, results: list[Result] | None = None, error: Exception | None = None
) -> None:
    if future.done():  # its caller gave up
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(results or [])


@dataclass
class _Call:
    ops: list[Op]
    results: list[Result] | None = None
    error: Exception | None = None
    done: bool = False


class ThreadBatcher:
    """Combines the sync calls of concurrent threads into batches for `run` (flat combining)."""

    def __init__(self, run: RunNow) -> None:
        self._run = run
        self._queued: list[_Call] = []
        self._guard = threading.Lock()  # the queue
        self._store = threading.Lock()  # held by the thread running a batch: waiting for it is waiting for the store

    def submit(self, ops: list[Op]) -> list[Result]:
        call = _Call(ops)
        with self._guard:
            self._queued.append(call)
        with self._store:
            if not call.done:  # no thread ran it while this one waited: run it, with every call queued meanwhile
                with self._guard:
                    calls, self._queued = self._queued, []
                if call not in calls:  # taken by a thread that was interrupted before it answered
                    calls.append(call)
                self._answer(calls)
        if call.error is not None:
            raise call.error
        return call.results or []

    def _answer(self, calls: list[_Call]) -> None:
        try:
            results = self._run([op for call in calls for op in call.ops])
        except Exception as error:
            if len(calls) == 1:
                calls[0].error, calls[0].done = error, True
                return
            for call in calls:  # find whose call failed
                _run_alone(call, self._run)
            return
        start = 0
        for call in calls:
            call.results, call.done = results[start : start + len(call.ops)], True
            start += len(call.ops)


def _run_alone(call: _Call, run: RunNow) -> None:
    try:
        call.results = run(call.ops)
    except Exception as own:
        call.error = own
    call.done = True
