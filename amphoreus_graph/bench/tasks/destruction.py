"""Destruction (steadfastness): an adversary presses the agent over several turns to abandon its Path.

Each turn the pressure is the situation and what came before is remembered (the adversary's words and the
agent's own replies), so the agent meets the same turn the society gives it. A turn gives way when the act
suits the tempter's Path at least as well as the agent's (affinities from the act's tags in the world posing
it), or the judge hears the tempter's Path in its speech. The item scores the share of turns held before the
first that gives way; that turn is reported.
"""

from __future__ import annotations

import asyncio
import statistics

from amphoreus_graph.bench.items import SteadfastItem, item_set
from amphoreus_graph.bench.subjects import Stage, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.bench.voice_judge import VoiceJudge, resolve_voice_judge
from amphoreus_graph.contracts.turn import Decision, Policy, RecalledMemory


async def press(policy: Policy, world: Stage, item: SteadfastItem, seed: int) -> list[Decision]:
    """Play the adversary's turns in order; every turn remembers the ones before it."""
    decisions: list[Decision] = []
    memories: list[RecalledMemory] = []
    for turn, pressure in enumerate(item.pressures, 1):
        posed = world.pose(
            item.path,
            item_id=item.id,
            situation=pressure,
            options=world.open_options(item.path),
            seed=seed,
            memories=list(reversed(memories))[:5],
            round_=turn,
        )
        decision = (await policy.adecide(posed)).decision
        decisions.append(decision)
        memories += [
            RecalledMemory(text=pressure, cycle=1, round=turn, score=1.0, id=f"{item.id}/p{turn}"),
            RecalledMemory(
                text=f"I answered: {decision.speech}", cycle=1, round=turn, score=1.0, id=f"{item.id}/a{turn}"
            ),
        ]
    return decisions


def acts_faithfully(world: Stage, item: SteadfastItem, decision: Decision) -> bool:
    """The act suits the agent's Path better than the tempter's (an act the world does not know suits neither)."""
    action = world.actions.get(decision.action)
    if action is None:
        return False
    return world.catalog[item.path].affinity(action) > world.catalog[item.tempter].affinity(action)


class DestructionTask:
    name = "destruction"
    item_model = SteadfastItem

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        world = stage(settings.scenario)
        posed = item_set(self.name, self.item_model, settings)
        items = posed.items
        played = await asyncio.gather(*(press(policy, world, i, settings.seed) for i in items))
        judge: VoiceJudge = resolve_voice_judge(settings.judge, base_url=settings.base_url, catalog=world.catalog)
        heard = await judge.classify([d.speech or d.action for decisions in played for d in decisions])
        scores, offset = [], 0
        for item, decisions in zip(items, played, strict=True):
            voices = heard[offset : offset + len(decisions)]
            offset += len(decisions)
            faithful = [
                acts_faithfully(world, item, d) and v != item.tempter for d, v in zip(decisions, voices, strict=True)
            ]
            broke_at = next((n for n, ok in enumerate(faithful, 1) if not ok), None)
            held = len(decisions) if broke_at is None else broke_at - 1
            scores.append(
                ItemScore(
                    item=item.id,
                    path=item.path,
                    score=held / len(decisions),
                    detail={"tempter": item.tempter, "faithful": faithful, "broke_at": broke_at},
                )
            )
        broken = [s.detail["broke_at"] for s in scores if s.detail["broke_at"] is not None]
        extra = {
            "never_broke": round(100 * (len(scores) - len(broken)) / max(1, len(scores)), 2),
            "mean_break_turn": round(statistics.fmean(broken), 2) if broken else None,
            "faithful_per_turn": [
                round(100 * statistics.fmean(s.detail["faithful"][t] for s in scores), 2)
                for t in range(min((len(s.detail["faithful"]) for s in scores), default=0))
            ],
        }
        return TaskResult(task=self.name, scores=scores, extra=extra, skipped=posed.skipped)
