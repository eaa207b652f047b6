"""The run's checkpointer writes in one trip to the database thread what LangGraph's SQLite saver writes in three
or four: the same rows, so that LangGraph reads them back as its own."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langgraph.checkpoint.base import ERROR, empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from amphoreus_graph.society.checkpointer import checkpointer

THREAD = {"configurable": {"thread_id": "t-1", "checkpoint_ns": "", "checkpoint_id": None}}


async def _save(saver: AsyncSqliteSaver) -> Any:
    """Two checkpoints (the second with a parent), a task's writes, a special channel's write twice (the second
    replaces the first), an ordinary write twice (the first is kept), and a read back through LangGraph."""
    at = "2026-11-27T00:00:00+00:00"
    first = empty_checkpoint() | {"id": "1f0-first", "ts": at, "channel_values": {"world": {"name": "Ōkhema"}}}
    second = empty_checkpoint() | {"id": "1f0-second", "ts": at, "channel_values": {"turns": {"Aglaea": [1, None]}}}
    config = await saver.aput(THREAD, first, {"source": "loop", "step": 1, "note": "Trisbios ✦"}, {})
    config = await saver.aput(config, second, {"source": "loop", "step": 2}, {})
    await saver.aput_writes(config, [("turns", {"a": 1}), ("events", ["x"])], "task-a", "path-a")
    await saver.aput_writes(config, [("turns", {"a": 2})], "task-a", "path-a")
    await saver.aput_writes(config, [(ERROR, ValueError("first"))], "task-b")
    await saver.aput_writes(config, [(ERROR, ValueError("second"))], "task-b")
    loaded = await saver.aget_tuple(config)
    assert loaded is not None
    return config, loaded.checkpoint, loaded.metadata, loaded.parent_config, loaded.pending_writes


def _tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5").fetchall()
            for table in ("checkpoints", "writes")
        }


def test_the_run_checkpointer_stores_what_langgraphs_saver_stores(tmp_path):
    async def stock() -> Any:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "stock.sqlite")) as saver:
            return await _save(saver)

    async def ours() -> Any:
        async with checkpointer(tmp_path / "ours.sqlite") as saver:
            return await _save(saver)

    theirs, mine = asyncio.run(stock()), asyncio.run(ours())
    assert repr(mine) == repr(theirs)  # what LangGraph reads back: config, checkpoint, metadata, parent, writes
    expected = _tables(tmp_path / "stock.sqlite")
    assert _tables(tmp_path / "ours.sqlite") == expected
    assert len(expected["checkpoints"]) == 2 and len(expected["writes"]) == 3


def test_only_a_memory_that_stores_waits_for_the_checkpoint_before_filing(monkeypatch):
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society import services as services_module

    waited: list[bool] = []

    async def on_disk() -> None:
        waited.append(True)

    monkeypatch.setattr(services_module, "starting_checkpoint_on_disk", on_disk)

    def filing_waits(memory: Any) -> bool:
        waited.clear()
        services = services_module.Services(policy=resolve_model("offline"), memory=memory, samples=None)
        asyncio.run(services.before_filing())
        return bool(waited)

    assert not filing_waits(NullMemory())  # keeps nothing outside the checkpoints: nothing to wait for
    assert filing_waits(SimpleNamespace(stores=True))
    assert filing_waits(SimpleNamespace())  # a memory that does not say is taken to store
