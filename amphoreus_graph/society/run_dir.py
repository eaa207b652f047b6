"""A run directory before a run touches it: checked, so that every fault a user can cause is one line, not a
traceback halfway through, and nothing already written is overwritten."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph.state import CompiledStateGraph

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.society.chronicle import CHRONICLE_DIR
from amphoreus_graph.society.samples import SAMPLES_DIR

CONFIG_FILE = "config.json"
CHECKPOINT_FILE = "checkpoint.sqlite"
SUMMARY_FILE = "summary.json"
WRITES_GRACE_S = 10.0  # how long a stopped run waits for its last checkpoint writes before undoing them


def writable_dir(path: Path, flag: str) -> None:
    """Make sure `path` is a directory this process can write (creating it), or say why not in one line."""
    if path.exists() and not path.is_dir():
        raise AmphoreusError(f"{flag} {path}: not a directory; expected a directory (or a path to create one at)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise AmphoreusError(
            f"{flag} {path}: cannot write there ({exc.strerror or exc}); expected a writable directory"
        ) from None


def holds_a_run(out: Path) -> bool:
    """Whether a run already wrote here: its config, its checkpoint, or any shard."""
    if (out / CONFIG_FILE).exists() or (out / CHECKPOINT_FILE).exists():
        return True
    return any(any((out / folder).glob("cycle-*.jsonl")) for folder in (SAMPLES_DIR, CHRONICLE_DIR))


def prepare_run_dir(out: Path, *, resume: bool, restart: bool = False) -> None:
    """A new run needs a directory that holds no run; a resumed one needs its checkpoint, unless it restarts from
    its beginning (`restart`), which discards the checkpoint, however damaged."""
    if resume:
        if not (out / CONFIG_FILE).is_file():
            raise AmphoreusError(f"{out / CONFIG_FILE}: no such file; expected a run directory")
        if restart:
            for leftover in (CHECKPOINT_FILE, f"{CHECKPOINT_FILE}-wal", f"{CHECKPOINT_FILE}-shm"):
                (out / leftover).unlink(missing_ok=True)
        elif not (out / CHECKPOINT_FILE).is_file():
            raise AmphoreusError(
                f"{out / CHECKPOINT_FILE}: no checkpoint to resume from; expected a run directory "
                "(or --fresh-memory to restart the run from its beginning)"
            )
    elif holds_a_run(out):
        raise AmphoreusError(f"{out}: already holds a run; expected a new --out, or --resume {out}")
    writable_dir(out, "--out")


def check_seeds_dir(seeds_dir: str | None) -> None:
    """A seeds directory the user named must exist: a typo would otherwise plant nothing and say nothing."""
    if seeds_dir is not None and not Path(seeds_dir).is_dir():
        raise AmphoreusError(f"--seeds-dir {seeds_dir}: no such directory; expected SEEDS_DIR/<scenario>/*.yaml")


class _Checkpointer(AsyncSqliteSaver):
    """The SQLite saver, knowing which of its writes are still in flight.

    A graph stream cancelled in-process (Ctrl-C in a notebook, a task cancelled) returns while LangGraph's
    background writes of the last step are still running; closing the connection under them leaves a write between
    its INSERT and its commit, with its cursor kept alive by the cancelled task: a zombie connection that holds the
    write lock, so a resume in the same process finds the file locked."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        super().__init__(conn)
        self.in_flight: set[asyncio.Task[Any]] = set()

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with self._tracked():
            return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        with self._tracked():
            await super().aput_writes(config, writes, task_id, task_path)

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


@asynccontextmanager
async def checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    """The run's checkpointer; once the run is over, however it ended, its writes are finished (what a finished
    step wrote is kept) and nothing holds the file's lock."""
    async with aiosqlite.connect(str(path)) as conn:
        saver = _Checkpointer(conn)
        try:
            yield saver
        finally:
            if saver.in_flight:
                await asyncio.wait(saver.in_flight, timeout=WRITES_GRACE_S)
            await conn.rollback()  # queued before the close: undoes a write still unfinished after the grace


async def checkpointed_values(
    graph: CompiledStateGraph[Any, Any, Any, Any], thread: RunnableConfig, path: Path
) -> dict[str, Any]:
    """The run's last checkpointed state ({} for none); a file that is not a SQLite checkpoint is one line."""
    try:
        snapshot = await graph.aget_state(thread)
    except sqlite3.DatabaseError as exc:
        raise AmphoreusError(
            f"{path}: not a readable checkpoint ({exc}); expected the SQLite file `amphoreus simulate` wrote "
            "(or --fresh-memory to restart the run from its beginning)"
        ) from None
    return dict(snapshot.values)
