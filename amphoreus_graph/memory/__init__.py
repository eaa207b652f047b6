"""Long-term memory ("Remembrance"): sentence-transformers embeddings filed per agent in a RecordIndex (Chroma by
default).

The names below are imported on first use, so a module that needs only the embedder (a Path judge scoring
recorded speech on a machine without Chroma) does not load Chroma with the package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from amphoreus_graph.contracts.memory import MemoryEvent
    from amphoreus_graph.contracts.memory_seam import Memory, Prefetching
    from amphoreus_graph.memory.index import RecordIndex
    from amphoreus_graph.memory.records import MemoryRecord
    from amphoreus_graph.memory.remembrance import Remembrance
    from amphoreus_graph.memory.store import MemorySpec, NullMemory, open_index, open_memory
    from amphoreus_graph.models.embedder import Embedder, default_embedder

_HOMES = {
    "MemoryEvent": "amphoreus_graph.contracts.memory",
    "Embedder": "amphoreus_graph.models.embedder",
    "default_embedder": "amphoreus_graph.models.embedder",
    "RecordIndex": "amphoreus_graph.memory.index",
    "MemoryRecord": "amphoreus_graph.memory.records",
    "Remembrance": "amphoreus_graph.memory.remembrance",
    "Memory": "amphoreus_graph.contracts.memory_seam",
    "Prefetching": "amphoreus_graph.contracts.memory_seam",
    "MemorySpec": "amphoreus_graph.memory.store",
    "NullMemory": "amphoreus_graph.memory.store",
    "open_index": "amphoreus_graph.memory.store",
    "open_memory": "amphoreus_graph.memory.store",
}
__all__ = [
    "Embedder",
    "Memory",
    "MemoryEvent",
    "MemoryRecord",
    "MemorySpec",
    "NullMemory",
    "Prefetching",
    "RecordIndex",
    "Remembrance",
    "default_embedder",
    "open_index",
    "open_memory",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
