"""The toy garden: a world plug-in in one file, implementing the World protocol with nothing but the contracts.

Three neighbours share a fruit tree. `pick` takes a fruit into your basket, `tend` makes the tree bear one more,
`gift` gives a fruit from your basket to a neighbour, `rest` does nothing. The cycle ends when the tree is bare or
at the round limit; the score is the fruit picked, each agent's tally the fruit in its basket.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from amphoreus_graph.contracts.actions import ActionSpec, TargetKind
from amphoreus_graph.contracts.ids import event_id
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import Decision, Option, TurnContext
from amphoreus_graph.contracts.world import (
    AgentProfile,
    AgentView,
    Critique,
    CycleEnd,
    Gauge,
    Perception,
    Resolution,
    WorldLabels,
    WorldState,
    WorldView,
)

ACTIONS = {
    spec.name: spec
    for spec in (
        ActionSpec(name="pick", help="take a fruit from the tree", tags=["acquisition"], verb="pick a fruit"),
        ActionSpec(
            name="tend", help="water the tree so it bears one more", tags=["care", "creation"], verb="tend the tree"
        ),
        ActionSpec(
            name="gift",
            target=TargetKind.AGENT,
            help="give a fruit from your basket to a neighbour",
            tags=["care", "alliance"],
            verb="give {target} a fruit",
            importance=4,
        ),
        ActionSpec(name="rest", help="sit in the shade", tags=["withdrawal"], verb="rest in the shade", importance=1),
    )
}


class Garden(BaseModel):
    cycle: int
    round: int = 0
    fruit: int
    picked: int = 0
    baskets: dict[str, int]
    trust: dict[str, dict[str, float]]
    outcome: str | None = None


class GardenWorld:
    labels = WorldLabels(
        agent="neighbour",
        agents="neighbours",
        role="a neighbour in the little garden",
        director="the seasons",
        objective="fruit",
        objectives="fruits",
        score="fruits",
    )
    actions = ACTIONS

    def __init__(self, raw: dict[str, Any]) -> None:
        self.name, self.title, self.description = raw["name"], raw["title"], raw["description"]
        self.rounds_per_cycle = int(raw["rounds_per_cycle"])
        self.fruit = int(raw["fruit"])
        self.agents = [AgentProfile.model_validate(a) for a in raw["agents"]]
        self._names = [a.name for a in self.agents]

    def genesis(self, cycle: int) -> WorldState:
        trust = {a: {b: 0.0 for b in self._names if b != a} for a in self._names}
        return Garden(cycle=cycle, fruit=self.fruit, baskets=dict.fromkeys(self._names, 0), trust=trust).model_dump()

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        garden = Garden.model_validate(state)
        garden.round += 1
        weather = rng.choice(["A warm wind moves the leaves.", "Rain taps on the leaves.", "Bees hum in the branches."])
        told = f"{weather} The tree holds {garden.fruit} fruit."
        return garden.model_dump(), {name: told for name in self._names}

    def actors(self, state: WorldState) -> list[str]:
        return list(self._names)

    def perceive(self, state: WorldState, agent: str) -> Perception:
        garden = Garden.model_validate(state)
        options = []
        for name, spec in ACTIONS.items():
            targets = [n for n in self._names if n != agent] if spec.target is TargetKind.AGENT else []
            if (name == "pick" and garden.fruit == 0) or (name == "gift" and garden.baskets[agent] == 0):
                continue
            options.append(Option(action=name, targets=targets, **spec.brief().model_dump()))
        return Perception(
            location="the garden",
            aim="a full basket",
            status={"basket": str(garden.baskets[agent]), "fruit on the tree": str(garden.fruit)},
            observations=[f"{n} has {garden.baskets[n]} fruit." for n in self._names if n != agent],
            options=options,
            pressures={"tend": 0.5} if garden.fruit <= 1 else {},
            trust=dict(garden.trust[agent]),
        )

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        return f"{situation} What does {agent} remember of the tree and the neighbours?"

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        garden = Garden.model_validate(state)
        events = []
        for agent in [n for n in self._names if n in decisions]:
            decision = decisions[agent]
            if decision.action == "pick" and garden.fruit > 0:
                garden.fruit -= 1
                garden.picked += 1
                garden.baskets[agent] += 1
                what = f"{agent} picked a fruit."
            elif decision.action == "tend":
                garden.fruit += 1
                what = f"{agent} tended the tree and it bore one more fruit."
            elif decision.action == "gift" and decision.target and garden.baskets[agent] > 0:
                garden.baskets[agent] -= 1
                garden.baskets[decision.target] += 1
                garden.trust[decision.target][agent] = min(1.0, garden.trust[decision.target][agent] + 0.2)
                what = f"{agent} gave {decision.target} a fruit."
            else:
                what = f"{agent} rested in the shade."
            said = f' {agent} said: "{decision.speech}"' if decision.speech else ""
            events.append(
                MemoryEvent(
                    id=event_id(garden.cycle, garden.round, agent),
                    text=f"In the garden, {what}{said}",
                    cycle=garden.cycle,
                    round=garden.round,
                    tick=now.tick,
                    witnesses=list(self._names),
                    importance=ACTIONS.get(decision.action, ACTIONS["rest"]).importance,
                    action=decision.action,
                    tags=list(ACTIONS.get(decision.action, ACTIONS["rest"]).tags),
                    involved=[agent, *([decision.target] if decision.target else [])],
                )
            )
        if garden.fruit == 0:
            garden.outcome = "bare"
        elif garden.round >= round_limit:
            garden.outcome = "season_over"
        return Resolution(state=garden.model_dump(), events=events)

    def outcome(self, state: WorldState) -> str | None:
        return Garden.model_validate(state).outcome

    def end(self, state: WorldState) -> CycleEnd:
        garden = Garden.model_validate(state)
        how = "the tree was picked bare" if garden.outcome == "bare" else "the season ended"
        return CycleEnd(
            outcome=garden.outcome or "season_over",
            text=f"Season {garden.cycle} is over: {how}, {garden.picked} fruit picked.",
            score=float(garden.picked),
            tally={n: float(c) for n, c in garden.baskets.items()},
            facts={"fruit_left": garden.fruit},
        )

    def view(self, state: WorldState) -> WorldView:
        garden = Garden.model_validate(state)
        return WorldView(
            cycle=garden.cycle,
            round=garden.round,
            outcome=garden.outcome,
            agents={n: AgentView(location="the garden", fields={"basket": str(c)}) for n, c in garden.baskets.items()},
            gauges=[Gauge(name="fruit on the tree", value=garden.fruit, high=max(self.fruit, garden.fruit))],
            trust=garden.trust,
            score={n: float(c) for n, c in garden.baskets.items()},
        )

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        bare = turn.status.get("fruit on the tree") == "1" and decision.action == "pick"
        return [Critique(cost=0.3, reason="picks the last fruit")] if bare else []

    def vocabulary(self) -> set[str]:
        return {"Garden", "Little Garden"}


def load(raw: dict[str, Any], source: Path) -> GardenWorld:
    return GardenWorld(raw)
