"""Files a reader (or a crash) never sees half-written: write beside the target, then rename over it; and
append-only logs that a replayed step rewrites from its checkpointed offset instead of duplicating."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from amphoreus_graph.errors import cannot_write


def write_atomic(path: Path, text: str) -> None:
    write_atomic_bytes(path, text.encode("utf-8"), durable=False)


def write_atomic_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace a file's bytes (`durable`: fsynced) beside it, then renamed over it. A write that fails (a full disk)
    leaves the file as it was, and is one line."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise cannot_write(path, error) from None


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Indented, key-sorted JSON: byte-stable for the same payload."""
    write_atomic(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def append_at(path: Path, payload: bytes, offset: int) -> int:
    """Write `payload` at `offset` (dropping anything a crashed attempt left after it), return the end.

    The caller checkpoints the returned offset; a step replayed after a crash passes the old one again, so the
    log holds each step exactly once. No fsync: a killed process loses nothing the OS was given, and what a
    machine crash could lose is rebuilt exactly from the checkpoint's history on resume (society/shards.py)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.truncate(offset)
            handle.seek(offset)
            handle.write(payload)
            return handle.tell()
    except OSError as error:  # a full disk, a read-only file: one line, and the run stops at its checkpoint
        raise cannot_write(path, error) from None
