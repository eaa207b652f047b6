"""The bell tower: a world plug-in that writes only what a world must (WorldBase supplies the rest).

Two ringers may ring the bell or rest; the cycle ends when the bell has rung five times.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from amphoreus_graph.contracts.actions import ActionSpec
from amphoreus_graph.contracts.ids import event_id
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import Decision, Option
from amphoreus_graph.contracts.world import AgentProfile, Perception, Resolution, WorldState
from amphoreus_graph.contracts.world_base import WorldBase


class Bells(WorldBase):
    name, title, rounds_per_cycle = "bells", "The Bell Tower", 6

    def __init__(self, raw: dict[str, Any]) -> None:
        self.agents = [AgentProfile(**a) for a in raw["agents"]]
        self.actions = {
            "ring": ActionSpec(name="ring", help="ring the bell", tags=["creation"], verb="ring the bell"),
            "rest": ActionSpec(name="rest", help="rest", tags=["withdrawal"], verb="rest"),
        }

    def genesis(self, cycle: int) -> WorldState:
        return {"cycle": cycle, "round": 0, "rung": 0}

    def perceive(self, state: WorldState, agent: str) -> Perception:
        return Perception(
            location="the tower",
            status={"rung": str(state["rung"])},
            options=[Option(action=name) for name in self.actions],
        )

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        rung = state["rung"] + sum(d.action == "ring" for d in decisions.values())
        events = [
            MemoryEvent(
                id=event_id(state["cycle"], state["round"], agent, 1),
                text=f"{agent} chose to {decision.action}.",
                cycle=state["cycle"],
                round=state["round"],
                tick=now.tick,
                witnesses=list(decisions),
                action=decision.action,
            )
            for agent, decision in decisions.items()
        ]
        outcome = "pealed" if rung >= 5 else "round_limit" if state["round"] >= round_limit else None
        return Resolution(state={**state, "rung": rung, "outcome": outcome}, events=events)


def load(raw: dict[str, Any], source: Path) -> Bells:
    return Bells(raw)
