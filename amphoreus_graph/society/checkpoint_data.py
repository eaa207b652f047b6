"""A run's checkpoint is data (docs/trust.md). LangGraph's serializer, by default, rebuilds whatever class a
checkpoint names, importing its module and calling it with the stored arguments, so a checkpoint file from
elsewhere could run code on `--resume`, `--fork` or `memory inspect`. Every reader and writer of a run's checkpoint
uses this one instead: it rebuilds only LangGraph's own safe types (dates, sets, `Send`, messages…) and hands back
anything else as the plain data stored for it. A run's state holds nothing else (its values are JSON-able)."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

CHECKPOINT_SERDE = JsonPlusSerializer(allowed_msgpack_modules=None)
