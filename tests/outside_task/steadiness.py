"""A benchmark task from outside the package: does the policy choose the same action when the same turn is
posed twice? Registered by its own entry point (`amphoreus_graph.bench_tasks`)."""

from __future__ import annotations

from pydantic import BaseModel

from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Option, Policy, TurnContext


class SteadinessItem(BaseModel):
    id: str
    path: str


class SteadinessTask:
    name = "steadiness"

    @property
    def item_model(self) -> type[SteadinessItem]:
        return SteadinessItem

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        scores = []
        for path in load_paths().names()[:4]:
            turn = TurnContext(
                run_id="steadiness",
                seed=settings.seed,
                cycle=1,
                round=1,
                agent="Ada",
                path=path,
                options=[Option(action="wait", tags=["withdrawal"]), Option(action="help", tags=["care"])],
            )
            first, again = (await policy.adecide(turn)).decision, (await policy.adecide(turn)).decision
            scores.append(ItemScore(item=f"steady-{path}", path=path, score=float(first.action == again.action)))
        return TaskResult(task=self.name, scores=scores)
