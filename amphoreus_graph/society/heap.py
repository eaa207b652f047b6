"""Keeping Python's full garbage collections out of the rounds.

A full collection scans every object the interpreter tracks, and a society's process holds several hundred
thousand that live as long as it does (LangGraph, LangChain, Chroma, pydantic's schemas, the embedder's
tokenizer): measured in a 12-agent run, each full collection stalled a round for 80-230 ms, longer as the run
went on. Once per process, when the first run has loaded all of that, those objects are frozen out of later
collections (`gc.freeze`, as servers that fork workers do); what the rounds allocate is collected as before.
"""

from __future__ import annotations

import functools
import gc


@functools.cache
def settle_heap() -> None:
    """Collect what is garbage now, then leave everything still alive out of future collections (once per
    process: what is frozen is never scanned again, so a cycle among it that dies later is not reclaimed)."""
    gc.collect()
    gc.freeze()
