"""Exclusive locks on directories: one writer at a time, claimed before anything is written.

An OS lock (`flock`) on the directory itself: the OS drops it when its holder exits, however it exits (`kill -9`
included), so no lock is ever left behind, and taking one writes nothing into the directory.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from amphoreus_graph.errors import AmphoreusError


class DirectoryLock:
    """Held from construction to `release` (or the end of a `with` block); a second holder, in this process or
    another, is refused in one line that names the directory and goes on with `refusal`."""

    def __init__(self, directory: Path, refusal: str) -> None:
        self.directory = directory
        self._fd: int | None = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise AmphoreusError(f"{directory}: in use by another running process; {refusal}") from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor lets go of its lock
            self._fd = None

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()
