"""What a run's checkpoint says its files and memory store hold, so that a resume can tell them apart from others.

- Shards (samples and chronicle): beside each committed byte offset, a digest of the committed lines, chained line
  by line (`fold`), so a line edited into other valid JSON is found, not only one that no longer parses.
- The memory store: the tally (memory/tally.py: a count and an order-free digest of the records) the last filing
  left, carried in the state as `memory_tally`. A filing step first has the memory check it still holds that
  (`expect`); a memory without a tally (NullMemory, a user's own) is not checked. A world reset is marked in the
  store before its rows (`file_reset`): it cannot be told from its own result by doing it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from amphoreus_graph.contracts.memory import MemoryEvent
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


@runtime_checkable
class MarksResets(Protocol):
    """A memory that can mark a world reset begun in its store (Remembrance)."""

    def reset_begun(self, mark: str) -> bool: ...

    def begin_reset(self, mark: str) -> None: ...


def file_reset(
    memory: Memory, state: Mapping[str, Any], echo: MemoryEvent, retention: dict[str, Retention], next_cycle: int
) -> tuple[dict[str, int], dict[str, Any]]:
    """`end_cycle`'s filing: the cycle's echo, then each agent's retention; what each agent kept, and the state
    update. A memory that marks resets (Remembrance) gets a mark before the reset's rows, naming the cycle and the
    checkpoint's tally: retention decays what it keeps, so a reset cut short by a kill, or written whole and not yet
    checkpointed, leaves a store neither as the checkpoint says nor as doing it again over it would; its mark
    vouches for it, and the resumed step does it again to its end, unchecked (`carry_over` keeps what it already
    carried)."""
    expected = state.get("memory_tally")
    marks = memory if expected and isinstance(memory, MarksResets) else None
    mark = f"reset:{next_cycle}:{expected['records']}:{expected['digest']}" if marks is not None and expected else ""
    begun = marks is not None and marks.reset_begun(mark)
    if not begun:
        expect_tally(memory, state)
    memory.remember([echo])
    if marks is not None and not begun:
        marks.begin_reset(mark)
    return memory.carry_over(retention, next_cycle), tally_update(memory)


def tally_update(memory: Memory) -> dict[str, Any]:
    """The state update of a filing step: what the store holds now (nothing for a memory without a tally)."""
    tally = getattr(memory, "tally", None)
    return {"memory_tally": tally().as_json()} if tally is not None else {}
