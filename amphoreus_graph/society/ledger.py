"""What a run's checkpoint says its files and memory store hold, so that a resume can tell them apart from others.

- Shards (samples and chronicle): beside each committed byte offset, a digest of the committed lines, chained line
  by line (`fold`), so a line edited into other valid JSON is found, not only one that no longer parses.
- The memory store: the tally (memory/tally.py: a count and an order-free digest of the records) the last filing
  left, carried in the state as `memory_tally`. A filing step first has the memory check it still holds that
  (`expect`); a memory without a tally (NullMemory, a user's own) is not checked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from amphoreus_graph.contracts.memory_seam import Memory, Retention
from amphoreus_graph.memory.tally import Tally

FILING_NODES = frozenset({"remember", "file_behind", "end_cycle"})  # the steps that write the memory store


def fold(digest: str, payload: bytes) -> str:
    """The digest of a shard's lines after appending `payload` (whole lines) to lines whose digest is `digest`."""
    for line in payload.splitlines(keepends=True):
        digest = hashlib.sha256(digest.encode() + line).hexdigest()[:32]
    return digest


def expect_tally(memory: Memory, state: Mapping[str, Any]) -> None:
    """Before a filing step writes: have the memory check it holds what the checkpoint says the last filing left."""
    expected = state.get("memory_tally")
    if expected and (expect := getattr(memory, "expect", None)) is not None:
        expect(Tally.of_json(expected))


def carried_before(
    memory: Memory, state: Mapping[str, Any], retention: Mapping[str, Retention], next_cycle: int
) -> dict[str, int] | None:
    """A world reset written before a kill that lost the step's checkpoint: what each agent kept, when the store
    no longer holds what the checkpoint says and holds the reset into `next_cycle` done (`carried_into`). Else
    None: the reset is filed now, checked as every filing is (filing the echo again and forgetting it again is
    no way to tell, since retention decays what it keeps)."""
    expected = state.get("memory_tally")
    tally, carried_into = getattr(memory, "tally", None), getattr(memory, "carried_into", None)
    if not expected or tally is None or carried_into is None or tally() == Tally.of_json(expected):
        return None
    kept: dict[str, int] | None = carried_into(dict(retention), next_cycle)
    return kept


def tally_update(memory: Memory) -> dict[str, Any]:
    """The state update of a filing step: what the store holds now (nothing for a memory without a tally)."""
    tally = getattr(memory, "tally", None)
    return {"memory_tally": tally().as_json()} if tally is not None else {}
