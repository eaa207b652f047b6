"""A store that fails under a running society (its disk full, its server gone): one line naming the store and what
happened, as a RunStopped (exit 3): the run stops at its last checkpoint and resumes once the fault is gone.

Only what the store's side raises is translated: an OS error (a full disk, a failed device), SQLite's, Chroma's own
InternalError (its message carries the database's, e.g. "database or disk is full") and a broken connection to a
Chroma server. Anything else (a wrong argument, a bug of ours) goes on as it is.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from chromadb.errors import InternalError

from amphoreus_graph.errors import OutsideFault

_DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DISK_FULL_WORDS = ("disk is full", "no space left", "os error 28", "file too large", "quota exceeded")
_NEARLY_FULL = 1 << 20  # bytes


class StoreFailed(OutsideFault):
    """The memory store failed in the middle of a run: the run is stopped where it last checkpointed."""


@contextmanager
def store_faults(where: str, directory: Path | None) -> Iterator[None]:
    """Translate the store's faults met inside the block into StoreFailed. `where` names the store (a directory
    or a server); `directory` is where an embedded store's files live (to say how much room is left)."""
    try:
        yield
    except httpx.TransportError as exc:
        raise StoreFailed(
            f"{where}: the Chroma server stopped answering ({_one_line(exc)}); the run stopped at its last "
            "checkpoint: start the server again on the same data, then --resume it (a run stopped before its first "
            "round starts again instead)"
        ) from None
    except (OSError, sqlite3.Error, InternalError) as exc:
        raise StoreFailed(_message(where, directory, exc)) from None


def full_disk(where: str, directory: Path, exc: BaseException) -> StoreFailed | None:
    """The StoreFailed to raise instead of `exc` when opening the embedded store in `directory` failed and says it
    was for want of room: an outside fault (exit 3), not a store to correct. Only the error's own words count here:
    an open refused for another reason on a nearly full disk is that reason."""
    return StoreFailed(_message(where, directory, exc)) if _says_full(exc) else None


def _says_full(exc: BaseException) -> bool:
    text = _one_line(exc).lower()
    return getattr(exc, "errno", None) in _DISK_FULL_ERRNOS or any(w in text for w in _DISK_FULL_WORDS)


def _message(where: str, directory: Path | None, exc: BaseException) -> str:
    """What happened, in the store's words; "the disk is full" where the error says so, or where the store's disk
    has less than a mebibyte left (Chroma words some of its failures to write without the cause: "Error in
    compaction")."""
    text = _one_line(exc)
    free = _free_bytes(directory) if directory is not None else None
    full = _says_full(exc) or (free is not None and free < _NEARLY_FULL)
    room = f"; {free} bytes free on its disk" if free is not None else ""
    what, remedy = ("the disk is full", "free some space") if full else ("the memory store failed", "fix the store")
    return (
        f"{where}: {what} ({text}{room}); the run stopped at its last checkpoint: {remedy}, then --resume it "
        "(a run stopped before its first round starts again instead)"
    )


def _free_bytes(directory: Path) -> int | None:
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def _one_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines) if lines else type(exc).__name__
