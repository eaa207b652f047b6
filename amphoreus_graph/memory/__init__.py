"""Long-term memory ("Remembrance"): sentence-transformers embeddings filed in Chroma, per agent."""

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.memory.embedder import Embedder, default_embedder
from amphoreus_graph.memory.records import MemoryRecord
from amphoreus_graph.memory.store import ChromaMemory, Memory, NullMemory, open_chroma

__all__ = [
    "ChromaMemory",
    "Embedder",
    "Memory",
    "MemoryEvent",
    "MemoryRecord",
    "NullMemory",
    "default_embedder",
    "open_chroma",
]
