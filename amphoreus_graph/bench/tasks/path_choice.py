"""Path-Choice: dilemmas whose options each embody a Path; accuracy = choosing one's own Path's option.

The options become the turn's only allowed (action, target) pairs and are described in the situation, so a
model reads them like any other turn and answers with an ordinary Decision.
"""

from __future__ import annotations

import asyncio

from amphoreus_graph.actions import Action
from amphoreus_graph.bench.items import ChoiceItem, load_items
from amphoreus_graph.bench.subjects import pose
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.contracts.turn import Policy, TurnContext


def choice_turn(item: ChoiceItem, seed: int) -> TurnContext:
    described = "\n".join(f"- {o.text}" for o in item.options)
    options: dict[Action, list[str]] = {o.action: [o.target] if o.target else [] for o in item.options}
    return pose(
        item.path,
        item_id=item.id,
        situation=f"{item.situation}\nYou can do one of these:\n{described}",
        options=options,
        seed=seed,
    )


class PathChoiceTask:
    name = "path_choice"

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        items = load_items(self.name, ChoiceItem, settings.split)
        results = await asyncio.gather(*(policy.adecide(choice_turn(i, settings.seed)) for i in items))
        scores = []
        for item, result in zip(items, results, strict=True):
            picked = next((o for o in item.options if o.action is result.decision.action), None)
            scores.append(
                ItemScore(
                    item=item.id,
                    path=item.path,
                    score=float(picked is not None and picked.path == item.path),
                    detail={"chose": picked.path if picked else None, "flags": result.flags},
                )
            )
        return TaskResult(task=self.name, scores=scores)
