"""Long-term memory ("Remembrance"): sentence-transformers embeddings filed per agent in a RecordIndex (Chroma by
default)."""

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.memory.embedder import Embedder, default_embedder
from amphoreus_graph.memory.index import RecordIndex
from amphoreus_graph.memory.records import MemoryRecord
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store import Memory, MemorySpec, NullMemory, open_index, open_memory

__all__ = [
    "Embedder",
    "Memory",
    "MemoryEvent",
    "MemoryRecord",
    "MemorySpec",
    "NullMemory",
    "RecordIndex",
    "Remembrance",
    "default_embedder",
    "open_index",
    "open_memory",
]
