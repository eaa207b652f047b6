"""Files a reader (or a crash) never sees half-written: write beside the target, then rename over it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Indented, key-sorted JSON: byte-stable for the same payload."""
    write_atomic(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
