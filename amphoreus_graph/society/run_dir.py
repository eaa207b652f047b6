"""A run directory before a run touches it: checked, so that every fault a user can cause is one line, not a
traceback halfway through, and nothing already written is overwritten."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import SHARD_GLOB, RunDir
from amphoreus_graph.locks import DirectoryLock
from amphoreus_graph.society.checkpointer import RunCheckpointer


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
    """Whether a run already wrote here: its config, its checkpoint, its call log, or any shard."""
    run = RunDir(out)
    if run.config.exists() or run.checkpoint.exists() or run.calls.exists():
        return True
    return any(any(folder.glob(SHARD_GLOB)) for folder in (run.samples, run.chronicle))


def prepare_run_dir(out: Path, *, resume: bool, restart: bool = False) -> None:
    """A new run needs a directory that holds no run; a resumed one needs its checkpoint, unless it restarts from
    its beginning (`restart`), which discards the checkpoint, however damaged."""
    run = RunDir(out)
    if resume:
        if not run.config.is_file():
            raise AmphoreusError(f"{run.config}: no such file; expected a run directory")
        check_writable_run(run)
        if restart:
            for leftover in run.checkpoint_files():
                leftover.unlink(missing_ok=True)
        elif not run.checkpoint.is_file():
            raise AmphoreusError(
                f"{run.checkpoint}: no checkpoint to resume from; expected a run directory "
                "(or --fresh-memory to restart the run from its beginning)"
            )
    elif holds_a_run(out):
        raise AmphoreusError(f"{out}: already holds a run; expected a new --out, or --resume {out}")
    writable_dir(out, "--out")


def claim_run_dir(out: Path, *, resume: bool) -> DirectoryLock:
    """Hold the run directory for this process (creating it for a new run): a second process on the same
    directory, whatever its other options, is refused in one line before it writes anything."""
    if resume:
        if not out.is_dir():
            raise AmphoreusError(f"{RunDir(out).config}: no such file; expected a run directory")
    else:
        writable_dir(out, "--out")
    return DirectoryLock(out, "expected one process per run directory: wait for it to finish, or another --out")


def check_writable_run(run: RunDir) -> None:
    """Every file and folder a resumed run writes to can be written: one that cannot (read-only, immutable) would
    stop the run halfway, after the round's model calls. One line naming the first that cannot."""
    shards = [shard for folder in (run.samples, run.chronicle) for shard in sorted(folder.glob(SHARD_GLOB))]
    files = [*shards, *run.checkpoint_files(), run.config, run.summary, run.calls]
    for place in [run.root, run.samples, run.chronicle, *files]:
        if place.exists() and not os.access(place, os.W_OK):
            raise AmphoreusError(
                f"{place}: cannot be written (read-only or immutable); expected every file of the run writable to "
                "resume it (make it writable, or copy the run elsewhere and resume the copy)"
            )


def newest_run(runs: Path) -> Path:
    """The run under `runs` whose samples were written last: in Studio, the society a user has just watched. A
    folder without config.json (a society thread of an older version, a copy of samples) is not a run: skipped."""
    shards = [s for s in runs.glob(f"*/{RunDir.SAMPLES}/{SHARD_GLOB}") if RunDir(s.parent.parent).config.is_file()]
    if not shards:
        raise AmphoreusError(
            f"{runs}: no run with config.json and samples yet; run a society first (a graph or the CLI), or name a run"
        )
    return max(shards, key=lambda shard: shard.stat().st_mtime).parent.parent


def check_seeds_dir(seeds_dir: str | None) -> None:
    """A seeds directory the user named must exist: a typo would otherwise plant nothing and say nothing."""
    if seeds_dir is not None and not Path(seeds_dir).is_dir():
        raise AmphoreusError(f"--seeds-dir {seeds_dir}: no such directory; expected SEEDS_DIR/<scenario>/*.yaml")


async def checked_rows(saver: RunCheckpointer, path: Path) -> str | None:
    """What in the checkpoint file is not as it was written (society/checkpointer.py), or None; a file that is not
    a SQLite checkpoint is one line."""
    try:
        return await saver.damaged()
    except sqlite3.DatabaseError as exc:
        raise unreadable_checkpoint(path, exc) from None


async def checkpointed_values(
    graph: CompiledStateGraph[Any, Any, Any, Any], thread: RunnableConfig, path: Path
) -> dict[str, Any]:
    """The run's last checkpointed state ({} for none); a file that is not a SQLite checkpoint is one line."""
    try:
        snapshot = await graph.aget_state(thread)
    except sqlite3.DatabaseError as exc:
        raise unreadable_checkpoint(path, exc) from None
    return dict(snapshot.values)


def unreadable_checkpoint(path: Path, error: sqlite3.DatabaseError) -> AmphoreusError:
    return AmphoreusError(
        f"{path}: not a readable checkpoint ({error}); expected the SQLite file `amphoreus simulate` wrote "
        "(or --fresh-memory to restart the run from its beginning)"
    )
