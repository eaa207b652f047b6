"""A run's checkpoint is data (docs/trust.md). LangGraph's serializer, by default, rebuilds whatever class a
checkpoint names, importing its module and calling it with the stored arguments, so a checkpoint file from
elsewhere could run code on `--resume`, `--fork` or `memory inspect`. Every reader and writer of a run's checkpoint
uses this one instead: it rebuilds only LangGraph's own safe types (dates, sets, `Send`, messages…) and hands back
anything else as the plain data stored for it. A run's state holds nothing else (its values are JSON-able).

A value of some size is stored compressed (zlib, its type marked `+zlib`): a round's values repeat themselves (the
same names in every turn's options, observations and trust), and they shrink 3-5× (docs/speed.md)."""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

COMPRESSED = "+zlib"
COMPRESS_FROM = 256  # bytes: below this zlib saves little, and most of a run's values are that small
LEVEL = 1  # zlib's fastest: within a few percent of its best on a run's values, at a fraction of the CPU


class CompressingSerializer(JsonPlusSerializer):
    """LangGraph's serializer, with values of COMPRESS_FROM bytes and more compressed (a subclass, so that
    LangGraph's allowlist copies of it stay this class)."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, data = super().dumps_typed(obj)
        if len(data) < COMPRESS_FROM:
            return type_, data
        return type_ + COMPRESSED, zlib.compress(data, LEVEL)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, stored = data
        if type_.endswith(COMPRESSED):
            return super().loads_typed((type_.removesuffix(COMPRESSED), zlib.decompress(stored)))
        return super().loads_typed(data)


CHECKPOINT_SERDE = CompressingSerializer(allowed_msgpack_modules=None)
