"""LangGraph Studio's long-term store (`"store"` in langgraph.json): Chroma instead of langgraph dev's in-memory one.

Items persist in $AMPHOREUS_STORE_DIR (default memory/langgraph-store) and `search(query=...)` uses the
amphoreus embedder (all-MiniLM-L6-v2, offline, loaded on the first semantic write or query). Items put with a
`ttl` are swept every 5 minutes (langgraph dev sweeps only its own store). docs/memory.md#chromastore says more.
"""

from amphoreus_graph.memory.langgraph_store import make_store

__all__ = ["make_store"]
