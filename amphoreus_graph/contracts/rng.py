"""Seeded randomness that is the same in every process (Python's hash() is salted per process)."""

from __future__ import annotations

import hashlib
import random


def stable_rng(*parts: object) -> random.Random:
    """A Random seeded from the parts' text, identical across processes and runs."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
