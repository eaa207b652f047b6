"""Who owns a society's memories in a store, and how far they go.

A store (a Chroma directory or server) may hold many societies; each society's memories belong to one run. The
owner is a small marker beside the society's collections (the run's token, its directory, a fingerprint of what
shapes its memories), written when the run starts. How far the memories go is read from the records themselves
(the latest tick filed), so no extra write per round is needed to know it.
"""

from __future__ import annotations

import hashlib
import json

from chromadb.api import ClientAPI
from chromadb.errors import NotFoundError
from pydantic import BaseModel, ValidationError

from amphoreus_graph.memory.naming import internal_collection
from amphoreus_graph.memory.store import ChromaMemory

_OWNER_KEY = "amphoreus_owner"


class StoreOwner(BaseModel):
    """The run a society's memories belong to."""

    token: str
    run_dir: str
    fingerprint: str


def owner_collection(society: str) -> str:
    """The marker's collection: one of the society's internal collections, which no agent's name can produce."""
    return internal_collection(society, "owner")


def read_owner(client: ClientAPI, society: str) -> StoreOwner | None:
    """The society's owner, or None when no run has claimed it (or the marker cannot be read)."""
    try:
        metadata = client.get_collection(owner_collection(society), embedding_function=None).metadata or {}
    except NotFoundError:
        return None
    raw = metadata.get(_OWNER_KEY)
    try:
        return StoreOwner.model_validate_json(raw) if isinstance(raw, str) else None
    except ValidationError:
        return None


def write_owner(client: ClientAPI, society: str, owner: StoreOwner) -> None:
    metadata = {_OWNER_KEY: owner.model_dump_json()}
    collection = client.get_or_create_collection(owner_collection(society), embedding_function=None, metadata=metadata)
    if collection.metadata != metadata:
        collection.modify(metadata=metadata)


def forget_owner(client: ClientAPI, society: str) -> None:
    try:
        client.delete_collection(owner_collection(society))
    except NotFoundError:
        return


def latest_tick(memory: ChromaMemory) -> int | None:
    """The latest tick any of the society's records was filed at (seeds are tick 0); None for no records."""
    records = [*(r for agent in memory.agents for r in memory.records(agent)), *memory.public_records()]
    ticks = [r.created for r in records]
    return max(ticks) if ticks else None


def fingerprint(**shaping: object) -> str:
    """A short digest of the settings that shape a run's memories (a resumed run must match it)."""
    return hashlib.sha256(json.dumps(shaping, sort_keys=True, default=str).encode()).hexdigest()[:16]
