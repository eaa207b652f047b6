"""Path-Choice: dilemmas whose options each embody a Path; accuracy = choosing one's own Path's option.

The options become the turn's only allowed (action, target) pairs, built from the world's action specs and
offered in the world's order, and are described in the situation, so a model reads them like any other turn
and answers with an ordinary Decision.
"""

from __future__ import annotations

import asyncio

from amphoreus_graph.bench.items import ChoiceItem, item_set
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.contracts.turn import Policy, TurnContext


def choice_turn(item: ChoiceItem, seed: int, scenario: str = DEFAULT_SCENARIO) -> TurnContext:
    world = stage(scenario)
    described = "\n".join(f"- {o.text}" for o in item.options)
    return world.pose(
        item.path,
        item_id=item.id,
        situation=f"{item.situation}\nYou can do one of these:\n{described}",
        options=world.offer({o.action: [o.target] if o.target else [] for o in item.options}),
        seed=seed,
    )


class PathChoiceTask:
    name = "path_choice"

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        posed = item_set(self.name, ChoiceItem, settings.split, settings.scenario)
        turns = [choice_turn(i, settings.seed, settings.scenario) for i in posed.items]
        results = await asyncio.gather(*(policy.adecide(turn) for turn in turns))
        scores = []
        for item, result in zip(posed.items, results, strict=True):
            picked = next((o for o in item.options if o.action == result.decision.action), None)
            scores.append(
                ItemScore(
                    item=item.id,
                    path=item.path,
                    score=float(picked is not None and picked.path == item.path),
                    detail={"chose": picked.path if picked else None, "flags": result.flags},
                )
            )
        return TaskResult(task=self.name, scores=scores, skipped=posed.skipped)
