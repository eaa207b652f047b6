"""The run's checkpointer stores what LangGraph's SQLite saver stores, committing the writes that wait together
(and never one cancelled before a transaction took it); a filing step waits for the checkpoint it started from only
where the memory keeps something outside the checkpoints."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.checkpoint.base import ERROR, empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.society.checkpointer import RunCheckpointer, checkpointer

THREAD = {"configurable": {"thread_id": "t-1", "checkpoint_ns": "", "checkpoint_id": None}}
AT = "2026-11-27T00:00:00+00:00"


async def _save(saver: AsyncSqliteSaver) -> Any:
    """Two checkpoints (the second with a parent, changing one of the first's two channels and clearing the
    other), a task's writes, a special channel's write twice (the second replaces the first), an ordinary write
    twice (the first is kept), and a read back through LangGraph of both checkpoints."""
    first = empty_checkpoint() | {
        "id": "1f0-first",
        "ts": AT,
        "channel_values": {"world": {"name": "Ōkhema"}, "turns": {}},
        "channel_versions": {"world": "1.0", "turns": "1.0", "gone": "1.0"},
    }
    second = first | {
        "id": "1f0-second",
        "channel_values": {"world": {"name": "Ōkhema"}, "turns": {"Aglaea": [1, None]}},
        "channel_versions": {"world": "1.0", "turns": "2.0", "gone": "2.0"},
    }
    config = await saver.aput(
        THREAD, first, {"source": "loop", "step": 1, "note": "Trisbios ✦"}, first["channel_versions"]
    )
    config = await saver.aput(config, second, {"source": "loop", "step": 2}, {"turns": "2.0", "gone": "2.0"})
    await saver.aput_writes(config, [("turns", {"a": 1}), ("events", ["x"])], "task-a", "path-a")
    await saver.aput_writes(config, [("turns", {"a": 2})], "task-a", "path-a")
    await saver.aput_writes(config, [(ERROR, ValueError("first"))], "task-b")
    await saver.aput_writes(config, [(ERROR, ValueError("second"))], "task-b")
    loaded = [await saver.aget_tuple(config), await saver.aget_tuple(THREAD)]
    loaded += [found async for found in saver.alist(THREAD)]
    return config, [(t.checkpoint, t.metadata, t.parent_config, t.pending_writes) for t in loaded if t is not None]


async def _save_at_once(saver: AsyncSqliteSaver) -> None:
    """The same writes handed over at once, as LangGraph's background tasks hand them: the two to one task's
    index in the order they were handed over."""
    config = await saver.aput(THREAD, empty_checkpoint() | {"id": "1f0-only", "ts": AT}, {"step": 1}, {})
    writes = [
        [("turns", {"task": task}), ("events", list(range(task)))]
        for task in range(40)  # 720 values: 2 statements
    ] + [[(ERROR, ValueError("first"))], [(ERROR, ValueError("second"))], [("turns", "kept")], [("turns", "not")]]
    tasks = [f"task-{i}" for i in range(40)] + ["task-e", "task-e", "task-k", "task-k"]
    await asyncio.gather(*(saver.aput_writes(config, w, t) for w, t in zip(writes, tasks, strict=True)))


def _tables(path: Path, tables: tuple[str, ...] = ("writes",)) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as conn:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5").fetchall() for table in tables}


def test_the_run_checkpointer_reads_back_what_langgraphs_saver_does_storing_each_value_once(tmp_path):
    async def stock(name: str, save: Any) -> Any:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / name)) as saver:
            return await save(saver)

    async def ours(name: str, save: Any) -> Any:
        async with checkpointer(tmp_path / name) as saver:
            return await save(saver)

    theirs, mine = asyncio.run(stock("stock.sqlite", _save)), asyncio.run(ours("ours.sqlite", _save))
    assert repr(mine) == repr(theirs)  # what LangGraph reads back: config, checkpoint, metadata, parent, writes
    assert len(mine[1]) == 4  # by id, the latest, and both listed
    expected = _tables(tmp_path / "stock.sqlite")
    assert _tables(tmp_path / "ours.sqlite") == expected and len(expected["writes"]) == 3  # a task's writes as theirs
    stored = _tables(tmp_path / "ours.sqlite", ("checkpoint_blobs",))["checkpoint_blobs"]
    # each value once, by the checkpoint that changed it: the world stored by the first only; "gone" cleared
    assert [(channel, version, type_) for _, _, channel, version, type_, _ in stored] == [
        ("gone", "1.0", "empty"),
        ("gone", "2.0", "empty"),
        ("turns", "1.0", "msgpack"),
        ("turns", "2.0", "msgpack"),
        ("world", "1.0", "msgpack"),
    ]
    asyncio.run(stock("stock-at-once.sqlite", _save_at_once))
    asyncio.run(ours("ours-at-once.sqlite", _save_at_once))
    expected = _tables(tmp_path / "stock-at-once.sqlite")
    assert _tables(tmp_path / "ours-at-once.sqlite") == expected and len(expected["writes"]) == 82


def _counting_commits(saver: RunCheckpointer) -> list[int]:
    commits: list[int] = []
    commit = saver.conn.commit

    async def counted() -> None:
        commits.append(1)
        await commit()

    saver.conn.commit = counted  # type: ignore[method-assign]
    return commits


def _written_tasks(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {task for (task,) in conn.execute("SELECT task_id FROM writes")}


def test_writes_handed_over_together_are_committed_together(tmp_path):
    async def run() -> int:
        async with checkpointer(tmp_path / "c.sqlite") as saver:
            await saver.setup()
            commits = _counting_commits(saver)
            config = await saver.aput(THREAD, empty_checkpoint() | {"id": "1f0-a", "ts": AT}, {}, {})
            await asyncio.gather(*(saver.aput_writes(config, [("turns", i)], f"task-{i}") for i in range(12)))
            return len(commits)

    commits = asyncio.run(run())
    assert 2 <= commits <= 3  # the checkpoint; the first task's writes; the eleven queued behind them
    assert _written_tasks(tmp_path / "c.sqlite") == {f"task-{i}" for i in range(12)}


def test_a_write_cancelled_before_a_transaction_took_it_is_never_written(tmp_path):
    async def run() -> None:
        async with checkpointer(tmp_path / "c.sqlite") as saver:
            await saver.setup()
            config = await saver.aput(THREAD, empty_checkpoint() | {"id": "1f0-a", "ts": AT}, {}, {})
            first = asyncio.ensure_future(saver.aput_writes(config, [("turns", 0)], "task-0"))
            await asyncio.sleep(0)  # the first holds the database
            queued = [asyncio.ensure_future(saver.aput_writes(config, [("turns", i)], f"task-{i}")) for i in (1, 2)]
            await asyncio.sleep(0)
            queued[0].cancel()
            await asyncio.gather(first, queued[1], return_exceptions=False)
            assert queued[0].cancelled()

    asyncio.run(run())
    assert _written_tasks(tmp_path / "c.sqlite") == {"task-0", "task-2"}


def test_a_transaction_cancelled_before_its_commit_is_undone_and_the_writes_behind_it_still_land(tmp_path):
    async def run() -> None:
        async with checkpointer(tmp_path / "c.sqlite") as saver:
            await saver.setup()
            config = await saver.aput(THREAD, empty_checkpoint() | {"id": "1f0-a", "ts": AT}, {}, {})
            inserted, stuck = asyncio.Event(), asyncio.Event()
            execute = saver.conn.execute_fetchall

            async def insert_then_stall(sql: str, values: Any) -> Any:
                rows = await execute(sql, values)
                if not inserted.is_set():  # the first transaction: inserted, then held before its commit
                    inserted.set()
                    await stuck.wait()
                return rows

            saver.conn.execute_fetchall = insert_then_stall  # type: ignore[method-assign]
            leader = asyncio.ensure_future(saver.aput_writes(config, [("turns", 0)], "task-0"))
            await inserted.wait()
            behind = asyncio.ensure_future(saver.aput_writes(config, [("turns", 1)], "task-1"))
            await asyncio.sleep(0)
            leader.cancel()
            await behind

    asyncio.run(run())
    assert _written_tasks(tmp_path / "c.sqlite") == {"task-1"}


def test_only_a_memory_that_stores_waits_for_the_checkpoint_before_filing(monkeypatch):
    from amphoreus_graph.catalogs.scenario import scenario_of
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society import services as services_module

    waited: list[bool] = []

    async def on_disk() -> None:
        waited.append(True)

    monkeypatch.setattr(services_module, "starting_checkpoint_on_disk", on_disk)

    def filing_waits(memory: Any) -> bool:
        waited.clear()
        services = services_module.Services(
            policy=resolve_model("offline"), memory=memory, samples=None, scenario=scenario_of("trio")
        )
        asyncio.run(services.before_filing())
        return bool(waited)

    assert not filing_waits(NullMemory())  # keeps nothing outside the checkpoints: nothing to wait for
    assert filing_waits(SimpleNamespace(stores=True))
    assert filing_waits(SimpleNamespace())  # a memory that does not say is taken to store


def test_a_large_value_is_stored_compressed_and_a_changed_byte_in_it_is_damage(tmp_path):
    path = tmp_path / "c.sqlite"
    world = {"names": [f"Villager {i}" for i in range(200)]}  # repeats itself, as a round's values do
    checkpoint = empty_checkpoint() | {
        "id": "1f0-a",
        "ts": AT,
        "channel_values": {"world": world},
        "channel_versions": {"world": "1.0"},
    }

    async def save() -> Any:
        async with checkpointer(path) as saver:
            config = await saver.aput(THREAD, checkpoint, {}, {"world": "1.0"})
            return (await saver.aget_tuple(config)).checkpoint["channel_values"]  # type: ignore[union-attr]

    async def damage() -> str | None:
        async with checkpointer(path) as saver:
            return await saver.damaged()

    assert asyncio.run(save()) == {"world": world}
    with sqlite3.connect(path) as db:
        type_, blob = db.execute("SELECT type, blob FROM checkpoint_blobs").fetchone()
        assert type_ == "msgpack+zlib" and len(blob) < len(repr(world)) / 3
        changed = bytearray(blob)
        changed[len(changed) // 2] ^= 0x01
        db.execute("UPDATE checkpoint_blobs SET blob = ?", (bytes(changed),))
    assert (
        asyncio.run(damage())
        == "a row of checkpoint_blobs (channel world at version 1.0) is changed since it was written"
    )


def test_a_checkpoint_file_in_langgraphs_own_layout_is_refused_in_one_line(tmp_path):
    path = tmp_path / "old.sqlite"

    async def old() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            await saver.aput(THREAD, empty_checkpoint() | {"id": "1f0-a", "ts": AT}, {}, {})

    async def resume() -> None:
        async with checkpointer(path) as saver:
            await saver.damaged()

    asyncio.run(old())
    before = path.read_bytes()
    with pytest.raises(AmphoreusError, match=r"old.sqlite: checkpoints in another layout .*start a new run$"):
        asyncio.run(resume())
    assert path.read_bytes() == before
