"""The memory seam: what a society needs from memory (`Memory`), what a memory may add to run faster
(`Prefetching`, an optional capability the graph detects), and the types both speak in.

A memory is what remembers, recalls, reflects and carries over; the head starts are speed only, never needed
for a correct run: a memory without them (NullMemory, a newcomer's backend) runs the same society, only slower.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import RecalledMemory


class RetentionMode(StrEnum):
    ALL = "all"
    ECHOES = "echoes"
    NONE = "none"


class Retention(BaseModel):
    """What an agent of a Path keeps of its memories when the world resets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: RetentionMode
    keep: int = Field(default=5, ge=0, description="echoes: how many of the most important memories")
    decay: float = Field(default=0.5, gt=0, le=1, description="echoes: importance multiplier per reset")


@dataclass(frozen=True)
class RecallRequest:
    """One recall as `recall` is asked it: each agent's query, how many memories, when, and the events pending."""

    queries: dict[str, str]
    k: int
    now: Moment
    pending: Sequence[MemoryEvent] = ()

    @functools.cached_property
    def _key(self) -> str:
        """Built only when a recall ranked ahead is there to compare with: every recall makes a request."""
        pending = [e.model_dump_json() for e in self.pending]
        return repr((sorted(self.queries.items()), self.k, self.now.model_dump_json(), pending))

    def same(self, other: RecallRequest) -> bool:
        return self._key == other._key


class Memory(Protocol):
    """What the society needs from memory; Remembrance is the real one, NullMemory remembers nothing.

    `stores`: whether filing writes anything outside the run's checkpoints (then a filing step first waits for
    the checkpoint it started from: a step redone after a kill must not find its own filing there). A memory
    without the attribute is taken to store."""

    stores: bool

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        """File events for their witnesses; each witness's importance gained, for reflection budgets."""
        ...

    def recall(
        self, queries: dict[str, str], k: int, now: Moment, pending: Sequence[MemoryEvent] = ()
    ) -> dict[str, list[RecalledMemory]]:
        """Each agent's `k` most fitting memories for its query, from its own memory only."""
        ...

    def touch(self, used: Mapping[str, Sequence[str]], now: Moment) -> None:
        """Mark each holder's used records (holder -> record ids) as accessed at `now`, each in its holder's own
        memory only."""
        ...

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        """The named agents' reflections, for the caller to `remember`."""
        ...

    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        """What each agent keeps as the world resets, by its Path's retention; how many records each kept."""
        ...


# The methods a memory must have (checked before a run starts: one error line, not an AttributeError mid-round).
MEMORY_METHODS = ("remember", "recall", "touch", "reflect", "carry_over")


@runtime_checkable
class Prefetching(Protocol):
    """A memory that can start work ahead of need: embeddings of coming queries, a coming recall known exactly,
    the model work that filing will ask for. The graph calls these only on a memory that has them all; each is a
    head start, never needed for a correct run."""

    def anticipate(self, texts: Callable[[], list[str]]) -> Future[None] | None:
        """Start on the texts a coming recall will likely embed; returns the work started, if any."""
        ...

    def anticipate_recall(self, request: Callable[[], RecallRequest]) -> Future[None] | None:
        """Start on a coming recall known exactly; `recall` asked the same answers from it."""
        ...

    def prepare(self, events: list[MemoryEvent], reflecting: list[str], now: Moment) -> None:
        """Start the model work that filing `events` and reflecting for `reflecting` at `now` will ask for (their
        importance ratings, the reflections), so that `remember` and `reflect` find it under way."""
        ...

    def settle(self) -> dict[str, Any]:
        """What model calls started by `prepare` and never claimed by a filing cost (a run that stopped between
        rounds), once they are done, as per-role use: the run counts them in its summary."""
        ...
