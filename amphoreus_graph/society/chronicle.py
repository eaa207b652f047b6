"""The chronicle: what each round did to the world, one JSONL line per round under `RUN/chronicle/`.

Samples say what each agent chose; the chronicle says what came of it (the game master's events and the world
after them as the world shows itself: places, the world's own fields, gauges, objectives, trust). Reports read
it; it is written by the same `record` step as the samples and at checkpointed offsets, so a resumed run holds
each round once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from amphoreus_graph.atomic import append_at
from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.contracts.world import WorldView
from amphoreus_graph.layout import RunDir, shard_name
from amphoreus_graph.society.samples import iter_shards, json_line


class RoundRecord(BaseModel):
    """One round as it ended: the world after the game master, and what happened (as the agents remember it)."""

    cycle: int
    round: int
    scenario: str = Field(default="", description="the scenario (name or YAML path): lets a run without config be read")
    world: WorldView
    events: list[MemoryEvent] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list, description="how the round was resolved, e.g. fallback")


class ChronicleWriter:
    """Appends rounds under `RUN/chronicle/`; offsets live beside the samples' (keys `chronicle/cycle-….jsonl`)."""

    def __init__(self, run_dir: Path) -> None:
        self.directory = RunDir(run_dir).chronicle

    @staticmethod
    def payloads(record: RoundRecord) -> dict[str, bytes]:
        """The bytes a round appends, by offset key: also what rebuilds a damaged shard."""
        return {f"{RunDir.CHRONICLE}/{shard_name(record.cycle)}": json_line(record.model_dump(mode="json")).encode()}

    def append(self, payloads: dict[str, bytes], offsets: dict[str, int]) -> dict[str, int]:
        """Append each shard's payload at its committed offset; return the new offsets."""
        updated = dict(offsets)
        for key, payload in payloads.items():
            updated[key] = append_at(self.directory / key.partition("/")[2], payload, updated.get(key, 0))
        return updated


def iter_chronicle(run_dir: Path) -> Iterator[RoundRecord]:
    """Every round of a run in order."""
    return iter_shards(RunDir(run_dir).chronicle, RoundRecord)
