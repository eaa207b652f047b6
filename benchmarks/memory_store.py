"""The stores the memory benchmark (see memory.py) measures: a Remembrance over Chroma on an embedded
PersistentClient in a temp dir, opened fresh for every measurement and removed afterwards."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma
from amphoreus_graph.memory.remembrance import Remembrance


def open_memory(directory: Path, society: str, agents: list[str], embedder: Any) -> Remembrance:
    """A Remembrance over the Chroma store in `directory`, as a simulation opens its memory."""
    client, lock = open_chroma(directory)
    return Remembrance(ChromaIndex(client, society, lock), agents, embedder)


@contextmanager
def chroma_store(
    tmp_root: str | None, society: str, agents: list[str], embedder: Any
) -> Iterator[tuple[Remembrance, Path]]:
    """A Remembrance on a fresh embedded PersistentClient in a temp dir, closed and removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="amphoreus-membench-", dir=tmp_root))
    memory: Remembrance | None = None
    try:
        memory = open_memory(directory, society, agents, embedder)
        yield memory, directory
    finally:
        if memory is not None:
            memory.close()
        memory = None
        with suppress(Exception):
            forget_clients()
        shutil.rmtree(directory, ignore_errors=True)


def forget_clients() -> None:
    """Let go of Chroma's cached systems (and the Rust bindings holding a store's directory), once nothing of
    ours refers to a client any more, so the directory can be removed or opened anew."""
    from chromadb.api.shared_system_client import SharedSystemClient

    gc.collect()
    SharedSystemClient.clear_system_cache()


def chroma_index(memory: Remembrance) -> ChromaIndex:
    """The Chroma index under a benchmarked memory (its collections are probed and timed directly)."""
    assert isinstance(memory.index, ChromaIndex)
    return memory.index


def disk_mib(directory: Path, digits: int) -> float:
    """The store's size on disk (allocated blocks, as `du` counts them) in MiB."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            with suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_blocks * 512
    return round(total / 2**20, digits)
