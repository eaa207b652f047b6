"""Files a reader (or a crash) never sees half-written: write beside the target, then rename over it; and
append-only logs that a replayed step rewrites from its checkpointed offset instead of duplicating."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """Replace a file's bytes durably: fsynced beside it, then renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Indented, key-sorted JSON: byte-stable for the same payload."""
    write_atomic(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def append_at(path: Path, payload: bytes, offset: int) -> int:
    """Write `payload` at `offset` (dropping anything a crashed attempt left after it), return the end.

    The caller checkpoints the returned offset; a step replayed after a crash passes the old one again, so the
    log holds each step exactly once. No fsync: a killed process loses nothing the OS was given, and what a
    machine crash could lose is rebuilt exactly from the checkpoint's history on resume (society/shards.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        handle.truncate(offset)
        handle.seek(offset)
        handle.write(payload)
        return handle.tell()
