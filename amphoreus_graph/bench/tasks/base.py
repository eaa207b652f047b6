"""What a benchmark task is: items in, one score in [0, 1] per (item, Path) out, plus optional detail and the
items the world could not pose."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO
from amphoreus_graph.contracts.turn import Policy


class ItemScore(BaseModel):
    item: str
    path: str
    score: float = Field(ge=0.0, le=1.0)
    detail: dict[str, Any] = Field(default_factory=dict)


class Skipped(BaseModel):
    """An item the world posing the benchmark cannot pose, and why."""

    id: str
    split: str
    reason: str


class TaskResult(BaseModel):
    task: str
    scores: list[ItemScore]
    extra: dict[str, Any] = Field(default_factory=dict, description="task-specific detail, e.g. a confusion matrix")
    skipped: list[Skipped] = Field(default_factory=list, description="items the world could not pose, and why")


class BenchSettings(BaseModel):
    """What every task may need besides the policy: the world, the split, the seed, the judge for free text."""

    scenario: str = Field(default=DEFAULT_SCENARIO, description="whose world poses the items: a name or a YAML file")
    split: str = "all"
    seed: int = 0
    seeds: int = Field(default=1, ge=1, description="run under seeds seed, seed+1, …; points are their mean")
    judge: str = "offline"
    base_url: str | None = None
    items: Path | None = Field(default=None, description="a user's item file (JSONL or YAML) instead of the packaged")


class Task(Protocol):
    name: str

    @property
    def item_model(self) -> type[Any]:
        """The pydantic model of the task's items (a user's `--items` file is validated with it)."""
        ...

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult: ...
