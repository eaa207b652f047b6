"""A run's first look at its embedded store, before it discards or opens anything.

A store whose files pass the check (chroma_check.py), or whose damaged indexes its write log rebuilds, is left to
the run (with `--fresh-memory`, which wipes the society's memories once it has opened it). Other damage is one
line; with `--fresh-memory`, a damaged store cannot be trusted to Chroma even to delete from, so it is moved aside
whole, next to where it was, when it holds this society's memories only; one that holds other societies' too, or
whose database cannot say whose it holds, is refused in one line and left as it was.
"""

from __future__ import annotations

from pathlib import Path

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_check import StoreDamaged, check_store, collection_names
from amphoreus_graph.memory.chroma_index import StoreLock
from amphoreus_graph.memory.naming import society_prefix


def check_or_set_aside(directory: Path, society: str, *, set_aside: bool) -> list[str]:
    """Check the store in `directory` under its lock: indexes its write log rebuilds are dropped for Chroma to
    rebuild (chroma_check.py). Other damage is StoreDamaged, unless `set_aside` (`--fresh-memory`): then a store
    holding only `society`'s collections is renamed to `<name>.damaged` (`-2`, `-3`… if taken). Returns the lines
    saying what was done."""
    if not directory.is_dir():
        return []
    try:
        lock = StoreLock(directory)
    except OSError as exc:
        raise AmphoreusError(
            f"{directory}: cannot lock the memory store ({exc.strerror or exc}); expected a writable directory"
        ) from None
    try:
        try:
            return check_store(directory)
        except StoreDamaged as damage:
            if not set_aside:
                raise
            aside = _move_aside(directory, society, damage)
            return [
                f"{damage.path}: {damage.problem}; the damaged store was moved to {aside}, and the run rebuilds "
                "its memories from its beginning"
            ]
    finally:
        lock.release()


def _aside_path(directory: Path) -> Path:
    """Where a damaged store is moved: the first free `<name>.damaged[-N]` beside it."""
    candidate = directory.with_name(f"{directory.name}.damaged")
    n = 2
    while candidate.exists():
        candidate = directory.with_name(f"{directory.name}.damaged-{n}")
        n += 1
    return candidate


def _move_aside(directory: Path, society: str, damage: StoreDamaged) -> Path:
    found = f"{damage.path}: {damage.problem}"
    try:
        names = collection_names(directory)
    except StoreDamaged:
        raise AmphoreusError(
            f"{found}; --fresh-memory cannot tell whose memories {directory} holds, so it leaves it as it is: "
            "restore it from a backup, or move it away yourself and run again"
        ) from None
    others = [name for name in names if not name.startswith(society_prefix(society))]
    if others:
        raise AmphoreusError(
            f"{found}; --fresh-memory leaves {directory} as it is, since it holds other memories too "
            f"({len(others)} collections, e.g. {others[0]!r}): restore it from a backup, or move it away yourself "
            "and run again"
        )
    aside = _aside_path(directory)
    try:
        directory.rename(aside)
    except OSError as exc:
        raise AmphoreusError(
            f"{found}; --fresh-memory cannot move {directory} aside ({exc.strerror or exc}): restore it from a "
            "backup, or move it away yourself and run again"
        ) from None
    return aside
