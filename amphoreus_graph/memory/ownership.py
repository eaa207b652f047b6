"""Who owns a society's memories in a store, and how far they go.

A store (a Chroma directory or server) may hold many societies; each society's memories belong to one run. The
owner is a small claim the society's index keeps beside its rows (the run's token, its directory, a fingerprint
of what shapes its memories), written when the run starts. How far the memories go is read from the records themselves
(the latest tick filed), so no extra write per round is needed to know it.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ValidationError

from amphoreus_graph.memory.index import RecordIndex
from amphoreus_graph.memory.remembrance import Remembrance


class StoreOwner(BaseModel):
    """The run a society's memories belong to."""

    token: str
    run_dir: str
    fingerprint: str


def read_owner(index: RecordIndex) -> StoreOwner | None:
    """The society's owner, or None when no run has claimed it (or the claim cannot be read)."""
    raw = index.claim()
    try:
        return StoreOwner.model_validate_json(raw) if raw is not None else None
    except ValidationError:
        return None


def write_owner(index: RecordIndex, owner: StoreOwner) -> None:
    index.set_claim(owner.model_dump_json())


def forget_owner(index: RecordIndex) -> None:
    index.set_claim(None)


def latest_tick(memory: Remembrance) -> int | None:
    """The latest tick any of the society's records was filed at (seeds are tick 0); None for no records."""
    records = [*(r for agent in memory.agents for r in memory.records(agent)), *memory.public_records()]
    ticks = [r.created for r in records]
    return max(ticks) if ticks else None


def fingerprint(**shaping: object) -> str:
    """A short digest of the settings that shape a run's memories (a resumed run must match it)."""
    return hashlib.sha256(json.dumps(shaping, sort_keys=True, default=str).encode()).hexdigest()[:16]
