"""Erudition: two-hop questions that only a private memory and a world fact answer together.

The memories arrive as the turn's recalled memories, the facts as observations, the question as the
situation; the agent answers in its speech, offered only the acts that take no target (a list of names would
put answers in its mouth). Scored like LoCoMo: exact match (the normalised answer appears in
the speech) is the score, unless the speech also names another answer the observations offer (saying every
observation aloud chooses nothing); token F1 between speech and answer is reported beside it.
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
from amphoreus_graph.policy.answering import names


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def exact_match(answer: str, speech: str) -> bool:
    """The answer's tokens appear, in order and together, in the speech."""
    wanted, said = " ".join(tokens(answer)), " ".join(tokens(speech))
    return bool(wanted) and f" {wanted} " in f" {said} "


def rivals(item: EruditionItem, offered: str = "") -> list[str]:
    """The other answers the item's observations offer: the capitalised names of the facts that do not hold the
    answer, less those the question, the answer's own fact or the `offered` acts' words name (a speaker who says
    them all has not chosen; one who names its act has not guessed)."""
    holding = [f for f in item.facts if exact_match(item.answer, f)]
    known = names(item.question) | names(offered) | {n for f in holding for n in names(f)}
    answer = set(tokens(item.answer))
    others = [n for f in item.facts if f not in holding for n in names(f)]
    return sorted({n for n in others if n not in known and n.lower() not in answer})


def answered(item: EruditionItem, speech: str, offered: str = "") -> bool:
    """The answer is said and no rival answer is: exact match, as in LoCoMo, that a list of guesses cannot win."""
    return exact_match(item.answer, speech) and not any(exact_match(r, speech) for r in rivals(item, offered))


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
        turns = [erudition_turn(world, i, settings.seed) for i in posed.items]
        results = await asyncio.gather(*(policy.adecide(turn) for turn in turns))
        scores = []
        for item, turn, result in zip(posed.items, turns, results, strict=True):
            speech = result.decision.speech
            offered = " ".join(f"{o.verb} {o.help}" for o in turn.options)
            f1 = round(token_f1(item.answer, speech), 4)
            scores.append(
                ItemScore(
                    item=item.id,
                    path=item.path,
                    score=float(answered(item, speech, offered)),
                    detail={"answer": item.answer, "f1": f1, "speech": speech},
                )
            )
        mean_f1 = statistics.fmean(s.detail["f1"] for s in scores) if scores else 0.0
        return TaskResult(
            task=self.name, scores=scores, extra={"token_f1": round(100 * mean_f1, 2)}, skipped=posed.skipped
        )
