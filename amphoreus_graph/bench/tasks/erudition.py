"""Erudition: two-hop questions that only a private memory and a world fact answer together.

The memories arrive as the turn's recalled memories, the facts as observations, the question as the
situation; the agent answers in its speech, offered only the acts that take no target (a list of names would
put answers in its mouth). Scored like LoCoMo: exact match (the normalised answer appears in
the speech) is the score; token F1 between speech and answer is reported beside it.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections import Counter

from amphoreus_graph.bench.items import EruditionItem, item_set
from amphoreus_graph.bench.subjects import Stage, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.contracts.turn import Policy, RecalledMemory, TurnContext


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def exact_match(answer: str, speech: str) -> bool:
    """The answer's tokens appear, in order and together, in the speech."""
    wanted, said = " ".join(tokens(answer)), " ".join(tokens(speech))
    return bool(wanted) and f" {wanted} " in f" {said} "


def token_f1(answer: str, speech: str) -> float:
    wanted, said = Counter(tokens(answer)), Counter(tokens(speech))
    common = sum((wanted & said).values())
    if not common:
        return 0.0
    precision, recall = common / sum(said.values()), common / sum(wanted.values())
    return 2 * precision * recall / (precision + recall)


def erudition_turn(world: Stage, item: EruditionItem, seed: int) -> TurnContext:
    memories = [
        RecalledMemory(text=text, cycle=1, round=n + 1, score=1.0, id=f"{item.id}/m{n}", kind="observation")
        for n, text in enumerate(item.memories)
    ]
    return world.pose(
        item.path,
        item_id=item.id,
        situation=f"{item.question} Give the answer in your speech.",
        options=world.answering(item.path),
        seed=seed,
        memories=memories,
        observations=item.facts,
    )


class EruditionTask:
    name = "erudition"
    item_model = EruditionItem

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        world = stage(settings.scenario)
        posed = item_set(self.name, self.item_model, settings)
        results = await asyncio.gather(*(policy.adecide(erudition_turn(world, i, settings.seed)) for i in posed.items))
        scores = []
        for item, result in zip(posed.items, results, strict=True):
            speech = result.decision.speech
            f1 = round(token_f1(item.answer, speech), 4)
            scores.append(
                ItemScore(
                    item=item.id,
                    path=item.path,
                    score=float(exact_match(item.answer, speech)),
                    detail={"answer": item.answer, "f1": f1, "speech": speech},
                )
            )
        mean_f1 = statistics.fmean(s.detail["f1"] for s in scores) if scores else 0.0
        return TaskResult(
            task=self.name, scores=scores, extra={"token_f1": round(100 * mean_f1, 2)}, skipped=posed.skipped
        )
