"""The run's SQLite checkpointer: checkpoints written behind the steps, yet a killed or cancelled run is exact.

A run checkpoints with LangGraph's `async` durability: a step's checkpoint is written while the next step runs, so
no step waits for the disk. That is safe for everything the checkpoint itself holds. What lives outside it (the
memory store a step files into) must never run ahead of the checkpoints, or a step redone after a kill would find a
later step's filing already there: a step with such effects first waits, with `starting_checkpoint_on_disk`, for the
checkpoint it started from. Only the filing steps wait, and only for one small SQLite commit.

The writes LangGraph hands over one at a time (a checkpoint a step, a task's writes each) are committed together:
whatever is waiting when the database is free goes in as one transaction, in the order it was handed over.

A checkpoint is stored by version (checkpoint_rows.py): its row names its channels' versions and a value is stored
once, by the step that changed it, so a round's checkpoints grow with what the round changed. A file written in
LangGraph's own layout (every value in every checkpoint, as runs were written before this layout) is refused in one
line: a step continuing it here would store only what it changed, and the rest would be nowhere to read back."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.checkpoint.sqlite.utils import search_where
from langgraph.config import get_config

from amphoreus_graph.errors import AmphoreusError, WriteFailed, cannot_write
from amphoreus_graph.society.checkpoint_data import CHECKPOINT_SERDE
from amphoreus_graph.society.checkpoint_reads import (
    CHECKPOINTS,
    WRITES,
    blob_queries,
    checkpoint_tuple,
    stored_checkpoint,
)
from amphoreus_graph.society.checkpoint_rows import (
    BLOB_INSERT,
    BLOBS,
    CHECKPOINT_INSERT,
    LAYOUT,
    ROW_DIGESTS,
    SELECT_DIGESTS,
    SELECT_ROWS,
    Insert,
    Row,
    blob_rows,
    checkpoint_row,
    digest_insert,
    digest_rows,
    row_digest,
    row_key,
    saved_config,
    write_rows,
    writes_insert,
)

WRITES_GRACE_S = 10.0  # how long a stopped run waits for its last checkpoint writes before undoing them
_CHECKPOINTER_KEY = "__pregel_checkpointer"  # where LangGraph hands a node its graph's checkpointer
_CHECKPOINT_MAP_KEY = "checkpoint_map"  # namespace → the checkpoint the node's step started from


@dataclass
class _Queued:
    """One checkpoint's or one task's rows (by statement), waiting for a transaction to take them."""

    parts: list[tuple[Insert, list[Row]]]
    committed: asyncio.Future[None]


class RunCheckpointer(AsyncSqliteSaver):
    """The SQLite saver, knowing which of its writes are in flight and which checkpoints are on disk, and committing
    the writes that wait together.

    Together: LangGraph's saver takes three or four trips through the event loop to the database thread for each
    write (cursor, statement, commit, close), one write at a time; at L = 0 a round's ~20 writes fell ever further
    behind the rounds (200 ms after 30 rounds). Here a write that finds the database busy queues its rows; the next
    to get the database inserts all the queued rows (one statement a table) and commits once.

    In flight: a graph stream cancelled in-process (Ctrl-C in a notebook, a task cancelled) returns while
    LangGraph's background writes of the last step still run; closing the connection under them leaves a write
    between its INSERT and its commit, its cursor kept alive by the cancelled task: a zombie connection that holds
    the write lock, so a resume in the same process would find the file locked."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        super().__init__(conn, serde=CHECKPOINT_SERDE)
        self.path = path
        self.failure: str | None = None  # why a write failed: every later wait for a checkpoint says it at once
        self.in_flight: set[asyncio.Task[Any]] = set()
        self._awaited: dict[str, asyncio.Event] = {}  # checkpoint id → set once it is committed
        self._queued: list[_Queued] = []  # rows no transaction has taken yet, in the order they were handed over

    async def setup(self) -> None:
        """LangGraph's tables, then commits that are not fsynced one by one (see `checkpointer`); here, not at
        connect, so that a file that is not a database fails where the run reports it in one line."""
        if self.is_setup:
            return
        new = await self._new_file()
        await super().setup()
        async with self.conn.execute("PRAGMA synchronous=NORMAL"):
            pass
        for statement in (ROW_DIGESTS, BLOBS, *([f"PRAGMA user_version = {LAYOUT}"] if new else [])):
            await self.conn.execute_fetchall(statement)  # on a file set up before: nothing changes in it
        await self.conn.commit()

    async def _new_file(self) -> bool:
        """Whether the file holds no checkpoints yet; one with checkpoints in another layout is refused before
        anything is written to it."""
        ((layout,),) = await self.conn.execute_fetchall("PRAGMA user_version")
        if layout == LAYOUT:
            return False
        tables = await self.conn.execute_fetchall("SELECT 1 FROM sqlite_master WHERE name = 'checkpoints'")
        if layout or (tables and await self.conn.execute_fetchall("SELECT 1 FROM checkpoints LIMIT 1")):
            raise AmphoreusError(
                f"{self.path}: checkpoints in another layout (user_version {layout}; this version stores them by "
                f"version, layout {LAYOUT}); expected a run written by this version of amphoreus-graph: resume or "
                "fork that run with the version that wrote it, or start a new run"
            )
        return True

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        try:
            with self._tracked(), self._failing():
                await self.setup()
                row = checkpoint_row(config, checkpoint, metadata, self.serde)
                values = blob_rows(config, checkpoint, new_versions, self.serde)
                await self._commit([(CHECKPOINT_INSERT, [row]), (BLOB_INSERT, values)])
                return saved_config(config, checkpoint)
        finally:  # a failed write releases its waiters too (they then raise its failure)
            if (written := self._awaited.pop(checkpoint["id"], None)) is not None:
                written.set()

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        with self._tracked(), self._failing():
            await self.setup()
            rows = write_rows(config, writes, task_id, task_path, self.serde)
            await self._commit([(writes_insert(writes), rows)])

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint `config` names (the thread's latest without an id), every value read back."""
        await self.setup()
        configurable = config["configurable"]
        where = [str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")]
        if checkpoint_id := get_checkpoint_id(config):
            sql = f"{CHECKPOINTS} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
            where.append(checkpoint_id)
        else:
            sql = f"{CHECKPOINTS} WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1"
        async with self.lock:
            rows = list(await self.conn.execute_fetchall(sql, where))
        return await self._read(tuple(rows[0])) if rows else None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """The checkpoints that match, newest first, every value read back."""
        await self.setup()
        where, params = search_where(config, filter, before)
        sql = f"{CHECKPOINTS} {where} ORDER BY checkpoint_id DESC" + (" LIMIT ?" if limit is not None else "")
        async with self.lock:
            rows = await self.conn.execute_fetchall(sql, [*params, *([limit] if limit is not None else [])])
        for row in rows:
            yield await self._read(tuple(row))

    async def _read(self, row: Row) -> CheckpointTuple:
        """A checkpoint from its row: its values by version, and its pending writes."""
        checkpoint = stored_checkpoint(row, self.serde)
        thread_id, namespace, checkpoint_id = row[:3]
        blobs: list[Row] = []
        async with self.lock:
            for sql, values in blob_queries(thread_id, namespace, checkpoint["channel_versions"]):
                blobs += [tuple(found) for found in await self.conn.execute_fetchall(sql, values)]
            writes = await self.conn.execute_fetchall(WRITES, (thread_id, namespace, checkpoint_id))
        return checkpoint_tuple(row, checkpoint, blobs, [tuple(w) for w in writes], self.serde)

    async def adelete_thread(self, thread_id: str) -> None:
        """Every row of the thread, its values and digests too."""
        await self.setup()
        async with self.lock:
            for table in ("checkpoints", "writes", "checkpoint_blobs"):
                await self.conn.execute_fetchall(f"DELETE FROM {table} WHERE thread_id = ?", (str(thread_id),))
            await self.conn.execute_fetchall("DELETE FROM row_digests WHERE thread_id = ?", (str(thread_id),))
            await self.conn.commit()

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """A write that fails (a full disk, a value SQLite cannot hold) stops the run in one line, and every step
        waiting for a checkpoint is let go with it, instead of waiting for ever for one that will never come."""
        try:
            yield
        except AmphoreusError:  # a failed write's line, or a file in another layout
            raise
        except Exception as error:
            if self.failure is None:
                self.failure = str(cannot_write(self.path, error))
                for waiting in self._awaited.values():
                    waiting.set()
            raise WriteFailed(self.failure) from None

    async def _commit(self, parts: list[tuple[Insert, list[Row]]]) -> None:
        """Return once the rows are committed, by this call's transaction or another's. Cancelled before a
        transaction took them, they are never written (as the stock saver's write cancelled waiting for its lock)."""
        queued = _Queued(parts, asyncio.get_running_loop().create_future())
        self._queued.append(queued)
        try:
            async with self.lock:
                if not queued.committed.done():
                    await self._commit_queued()
        except BaseException:
            queued.committed.cancel()
            with suppress(ValueError):
                self._queued.remove(queued)
            raise
        queued.committed.result()

    async def _commit_queued(self) -> None:
        """Insert every queued row and commit, holding the lock. The statements run by `execute_fetchall`, which
        keeps no cursor: a cursor left in a cancelled task's frame would keep the connection, and its write lock,
        alive after close."""
        batch, self._queued = self._queued, []
        try:
            if self.conn.in_transaction:  # a transaction cancelled between its inserts and its commit
                await self.conn.rollback()
            for insert, rows in _by_statement(batch):
                for table, written in ((insert, rows), (digest_insert(insert), digest_rows(insert, rows))):
                    for sql, values in table.statements(written):
                        await self.conn.execute_fetchall(sql, values)
            await self.conn.commit()
        except BaseException:  # not committed: what is still awaited goes back to the queue's head
            self._queued[:0] = [queued for queued in batch if not queued.committed.done()]
            raise
        for queued in batch:
            if not queued.committed.done():
                queued.committed.set_result(None)

    async def damaged(self) -> str | None:
        """What in the file is not as it was written, or None: a row whose bytes differ from its digest, or a
        digest whose row is gone or has another key (rows written before digests were kept are taken as they are).
        Reads every row once: a resume asks, before the run's past is trusted."""
        await self.setup()
        held: dict[Row, str] = {}
        async with self.lock:
            for table, select in SELECT_ROWS.items():
                for row in await self.conn.execute_fetchall(select):
                    held[row_key(table, tuple(row))] = row_digest(tuple(row))
            digests = await self.conn.execute_fetchall(SELECT_DIGESTS)
        for *key, digest in digests:
            if held.get(tuple(key)) != digest:
                table, _, _, name, version = key[:5]  # a value's key: its channel and version (row_key)
                what = "missing or renamed" if tuple(key) not in held else "changed"
                which = f"channel {name} at version {version}" if table == "checkpoint_blobs" else f"checkpoint {name}"
                return f"a row of {table} ({which}) is {what} since it was written"
        return None

    async def on_disk(self, thread_id: str, namespace: str, checkpoint_id: str) -> None:
        """Return once the checkpoint named is committed (looked for holding the lock: a transaction under way
        shows its rows to this connection before it commits)."""
        if self.failure is not None:
            raise WriteFailed(self.failure)
        written = self._awaited.setdefault(checkpoint_id, asyncio.Event())  # before the look: no put is missed
        await self.setup()
        async with self.lock:
            found = await self.conn.execute_fetchall(
                "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (thread_id, namespace, checkpoint_id),
            )
        if found:
            self._awaited.pop(checkpoint_id, None)
            return
        await written.wait()
        if self.failure is not None:
            raise WriteFailed(self.failure)

    @contextmanager
    def _tracked(self) -> Iterator[None]:
        if (task := asyncio.current_task()) is None:  # run outside a task: nothing can leave it behind
            yield
            return
        self.in_flight.add(task)
        try:
            yield
        finally:
            self.in_flight.discard(task)


_TABLE_ORDER = {CHECKPOINT_INSERT: 0, BLOB_INSERT: 1}  # then the writes


def _by_statement(batch: list[_Queued]) -> Iterator[tuple[Insert, list[Row]]]:
    """The batch's rows by statement: checkpoints, then their values, then the writes (order across tables is
    nothing to a transaction), each run of one conflict rule kept in order."""
    parts = [part for queued in batch for part in queued.parts]
    ordered = sorted(parts, key=lambda part: _TABLE_ORDER.get(part[0], 2))  # stable
    for insert, run in itertools.groupby(ordered, key=lambda part: part[0]):
        yield insert, [row for _, rows in run for row in rows]


async def starting_checkpoint_on_disk() -> None:
    """In a node: wait until the checkpoint this step started from is committed, when the graph runs on a
    `RunCheckpointer` (another checkpointer, or none, keeps its own durability: nothing to wait for here)."""
    configurable = get_config().get("configurable", {})
    saver = configurable.get(_CHECKPOINTER_KEY)
    started_from = configurable.get(_CHECKPOINT_MAP_KEY) or {}
    if not isinstance(saver, RunCheckpointer) or not started_from:
        return
    namespace, checkpoint_id = list(started_from.items())[-1]  # the innermost graph: the one running this node
    await saver.on_disk(str(configurable["thread_id"]), namespace, checkpoint_id)


@asynccontextmanager
async def checkpointer(path: Path) -> AsyncIterator[RunCheckpointer]:
    """The run's checkpointer; once the run is over, however it ended, its writes are finished (what a finished
    step wrote is kept) and nothing holds the file's lock.

    Commits are not fsynced one by one (`synchronous=NORMAL`, WAL): a killed process loses nothing the OS was
    given; a power cut can lose the last commits, and the memory store may then be ahead of the checkpoint, which
    a resume refuses in one line rather than repeat a round on top of it."""
    async with aiosqlite.connect(str(path)) as conn:
        saver = RunCheckpointer(conn, path)
        try:
            yield saver
        finally:
            if saver.in_flight:
                await asyncio.wait(saver.in_flight, timeout=WRITES_GRACE_S)
            await conn.rollback()  # queued before the close: undoes a write still unfinished after the grace
