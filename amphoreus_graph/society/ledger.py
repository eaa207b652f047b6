"""What a run's checkpoint says its files and memory store hold, so that a resume can tell them apart from others.

- Shards (samples and chronicle): beside each committed byte offset, a digest of the committed lines, chained line
  by line (`fold`), so a line edited into other valid JSON is found, not only one that no longer parses.
- The memory store: the tally (memory/tally.py: a count and an order-free digest of the records) the last filing
  left, carried in the state as `memory_tally`. A filing step first has the memory check it still holds that
  (`expect`); a memory without a tally (NullMemory, a user's own) is not checked. A filing step marks itself
  begun in the store before its first write (`file_checked`), so one cut short by a kill is written to its end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.contracts.memory_seam import Memory, Retention
from amphoreus_graph.memory.tally import Tally

T = TypeVar("T")
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
class MarksFilings(Protocol):
    """A memory that can write marks to its store (Remembrance): a filing step marks itself begun there."""

    def marked(self, mark: str) -> bool: ...

    def mark(self, mark: str) -> None: ...

    def unmark(self, mark: str) -> None: ...


def file_checked(
    memory: Memory, state: Mapping[str, Any], step: str, write: Callable[[], T], *, repeatable: bool = True
) -> tuple[T, dict[str, Any]]:
    """A filing step: `write` (its filings), once the store is checked to hold what the checkpoint says; what it
    returned, and the state update.

    A step's rows may take several writes of the store (Chroma deletes, upserts and updates in calls of its batch
    size), and a kill may fall between them. So a memory that can (MarksFilings), found as the checkpoint says,
    gets a mark naming the step and the checkpoint's tally before the first write, and a resumed step that finds
    it writes again, unchecked, to its end: the mark vouches that the store is this step's, part-written. A
    `repeatable` step (filing records: writing them again changes nothing) removes its mark once written, and a
    resume over it whole is the memory's own check (what it would write is all there). A reset is not repeatable
    (retention decays what it keeps): its mark stays, and `carry_over` keeps first what it already carried, so
    doing it again over its own writes ends where it ended."""
    expected = state.get("memory_tally")
    marks = memory if expected and isinstance(memory, MarksFilings) else None
    mark = f"{step}:{expected['records']}:{expected['digest']}" if marks is not None and expected else ""
    if marks is None or not expected:
        expect_tally(memory, state)
    elif _holds(memory, expected):
        marks.mark(mark)  # the step begins
    elif not marks.marked(mark):
        expect_tally(memory, state)  # not this step's writes: the memory's own check says whether they are its own
    result = write()
    if marks is not None and repeatable:
        marks.unmark(mark)
    return result, tally_update(memory)


def _holds(memory: Memory, expected: Mapping[str, Any]) -> bool:
    tally = getattr(memory, "tally", None)
    return tally is not None and tally() == Tally.of_json(dict(expected))


def file_reset(
    memory: Memory, state: Mapping[str, Any], echo: MemoryEvent, retention: dict[str, Retention], next_cycle: int
) -> tuple[dict[str, int], dict[str, Any]]:
    """`end_cycle`'s filing: the cycle's echo, then each agent's retention; what each agent kept, and the state
    update."""

    def write() -> dict[str, int]:
        memory.remember([echo])
        return memory.carry_over(retention, next_cycle)

    return file_checked(memory, state, f"reset-{next_cycle}", write, repeatable=False)


def tally_update(memory: Memory) -> dict[str, Any]:
    """The state update of a filing step: what the store holds now (nothing for a memory without a tally)."""
    tally = getattr(memory, "tally", None)
    return {"memory_tally": tally().as_json()} if tally is not None else {}
