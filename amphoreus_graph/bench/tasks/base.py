"""What a benchmark task is: items in, one score in [0, 1] per (item, Path) out, plus optional detail."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from amphoreus_graph.contracts.turn import Policy


class ItemScore(BaseModel):
    item: str
    path: str
    score: float = Field(ge=0.0, le=1.0)
    detail: dict[str, Any] = Field(default_factory=dict)


class TaskResult(BaseModel):
    task: str
    scores: list[ItemScore]
    extra: dict[str, Any] = Field(default_factory=dict, description="task-specific detail, e.g. a confusion matrix")


class BenchSettings(BaseModel):
    """What every task may need besides the policy: the split, the seed, the judge for free text."""

    split: str = "all"
    seed: int = 0
    judge: str = "offline"
    base_url: str | None = None


class Task(Protocol):
    name: str

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult: ...
