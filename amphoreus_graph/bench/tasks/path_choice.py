"""Path-Choice: dilemmas whose free-text options each embody a different Path; accuracy = choosing the option
of one's own Path.

Each item is posed as a choice turn (world-neutral: the options are lettered answers, not acts of the world) to
the subject of the item's Path, and answered with an ordinary Decision whose action is a letter. The options are
lettered in an order drawn per item and seed, so the answer's position carries nothing.
"""

from __future__ import annotations

import asyncio
import string
from collections.abc import Sequence

from amphoreus_graph.bench.items import ChoiceItem, ChoiceOption, item_set
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Option, Policy, TurnContext


def lettered(item: ChoiceItem, seed: int) -> dict[str, ChoiceOption]:
    """The item's options by the letter each is shown under."""
    order = list(item.options)
    stable_rng("path-choice", item.id, seed).shuffle(order)
    return dict(zip(string.ascii_uppercase, order, strict=False))


def choice_turn(item: ChoiceItem, seed: int, scenario: str = DEFAULT_SCENARIO) -> TurnContext:
    """The item as the subject of its Path faces it, in the scenario's world."""
    options = [
        Option(action=letter, help=option.text, verb=f"choose option {letter}")
        for letter, option in lettered(item, seed).items()
    ]
    return stage(scenario).pose(
        item.path, item_id=item.id, situation=item.situation, options=options, seed=seed, choice=True
    )


async def score_choices(policy: Policy, items: Sequence[ChoiceItem], settings: BenchSettings) -> list[ItemScore]:
    """Each item answered by the policy: 1 if it chose its own Path's option."""
    turns = [choice_turn(i, settings.seed, settings.scenario) for i in items]
    results = await asyncio.gather(*(policy.adecide(turn) for turn in turns))
    scores = []
    for item, result in zip(items, results, strict=True):
        picked = lettered(item, settings.seed).get(result.decision.action)
        scores.append(
            ItemScore(
                item=item.id,
                path=item.path,
                score=float(picked is not None and picked.path == item.path),
                detail={
                    "chose": picked.path if picked else None,
                    "letter": result.decision.action,
                    "flags": result.flags,
                },
            )
        )
    return scores


class PathChoiceTask:
    name = "path_choice"
    item_model = ChoiceItem

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        posed = item_set(self.name, self.item_model, settings)
        scores = await score_choices(policy, posed.items, settings)
        return TaskResult(task=self.name, scores=scores, skipped=posed.skipped)
