"""`amphoreus memory compact RUN`: a run's embedded store with its write log compacted and its free pages returned
to the disk.

The store keeps Chroma's write log for a damaged index to be rebuilt from (memory/log_rebuild.py), compacted at each
open; a single long run keeps its whole log until then, and SQLite reuses freed pages without giving them back. This
opens the store as a run does (checked first, then opened locked, its log compacted), closes it, and rewrites the
database (VACUUM) under the same lock: the records, their vectors and the rebuild ability are unchanged; only the
file shrinks.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from chromadb.api.client import Client

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.log_rebuild import DATABASE, logged_writes, vacuum
from amphoreus_graph.memory.store import MemorySpec, open_client, ready_to_open
from amphoreus_graph.memory.store_faults import full_disk
from amphoreus_graph.society.config import stored_config


@dataclass(frozen=True)
class Compacted:
    store: Path
    bytes_before: int
    bytes_after: int
    writes_before: int
    writes_after: int
    repaired: list[str]  # indexes the check rebuilt from the write log, one line each


def compact_run_memory(run: Path) -> Compacted:
    """Compact the embedded store `run`'s config.json names; one line for a server's store, a missing one, a store
    in use, a damaged one or a full disk."""
    config = stored_config(run)
    spec = config.memory_store()
    if not isinstance(spec, MemorySpec) or spec.directory is None:
        raise AmphoreusError(f"{run}: its memory is not an embedded store; expected a run whose memory is a directory")
    store = spec.directory
    if not (store / DATABASE).is_file():
        raise AmphoreusError(f"{store / DATABASE}: no such file; expected the run's memory store (see its config.json)")
    repaired = ready_to_open(spec, config.run_id, fresh_memory=False)  # checked as a run checks it
    bytes_before, writes_before = _bytes(store), logged_writes(store)
    client, lock = open_client(spec)  # locked, its log compacted (unchanged since the check: not read again)
    assert lock is not None
    try:
        if isinstance(client, Client):
            client.close()
        vacuum(store)
    except sqlite3.Error as exc:
        raise full_disk(str(store), store, exc) or AmphoreusError(
            f"{store}: cannot rewrite the memory store ({exc}); expected a writable Chroma store"
        ) from None
    finally:
        lock.release()
    return Compacted(store, bytes_before, _bytes(store), writes_before, logged_writes(store), repaired)


def _bytes(folder: Path) -> int:
    return sum(os.stat(os.path.join(root, name)).st_size for root, _, names in os.walk(folder) for name in names)
