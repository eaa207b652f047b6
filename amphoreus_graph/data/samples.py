"""Training samples: one per agent turn, written to JSONL shards exactly once.

Each round's samples are appended at a byte offset that the graph checkpoints. A replayed round first
truncates its shard back to that offset, so a crash between writing and checkpointing never duplicates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from amphoreus_graph.atomic import append_at
from amphoreus_graph.policy.base import Decision, TurnContext

Row = TypeVar("Row", bound=BaseModel)


class Sample(BaseModel):
    """One agent turn as a chat example: the messages the model saw and the Decision it gave."""

    id: str
    run: str
    cycle: int
    round: int
    heir: str
    path: str
    model: str
    messages: list[dict[str, str]] = Field(description="system, user, then the assistant's Decision as JSON")
    decision: Decision
    flags: list[str] = Field(default_factory=list)
    context: TurnContext | None = Field(
        default=None, description="the turn as the heir saw it, so experts can re-pose it to other policies"
    )

    @staticmethod
    def make_id(run: str, cycle: int, round_: int, heir: str) -> str:
        return f"{run}/c{cycle}/r{round_}/{heir}"


def shard_name(cycle: int) -> str:
    return f"cycle-{cycle:04d}.jsonl"


class ShardWriter:
    """Writes rounds of samples under `RUN/samples/`; idempotent given the checkpointed offsets."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def write_round(self, samples: list[Sample], offsets: dict[str, int]) -> dict[str, int]:
        """Append samples to their cycle shards starting at the committed offsets; return new offsets."""
        if not samples:
            return offsets
        updated = dict(offsets)
        by_shard: dict[str, list[Sample]] = {}
        for sample in samples:
            by_shard.setdefault(shard_name(sample.cycle), []).append(sample)
        for shard, rows in by_shard.items():
            payload = "".join(json_line(s.model_dump(mode="json")) for s in rows).encode()
            updated[shard] = append_at(self.directory / shard, payload, updated.get(shard, 0))
        return updated


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def iter_shards(directory: Path, model: type[Row]) -> Iterator[Row]:
    """Every row of a directory's cycle shards, in shard order, one line at a time (flat memory)."""
    for shard in sorted(directory.glob("cycle-*.jsonl")):
        with open(shard, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield model.model_validate_json(line)


def iter_samples(directory: Path) -> Iterator[Sample]:
    """Every sample under a run's samples directory, in shard order."""
    return iter_shards(directory, Sample)


def read_samples(directory: Path) -> list[Sample]:
    """Every sample under a run's samples directory, in shard order."""
    return list(iter_samples(directory))
