"""WorldBase: the `World` protocol with sensible defaults, so a plug-in writes only what it changes.

A world must say how a cycle starts (`genesis`), what an agent sees and may do (`perceive`) and how a round's
decisions resolve (`resolve`). Everything else has a default a small world can live with, and any of it may be
overridden: rounds are opened with one plain situation, every agent acts, recall looks for the situation, the
cycle ends when the state's `outcome` is set, the dashboard shows each agent by name, a decision not offered is
the only rule a judge is told of, and the world's proper nouns are its agents' names.

    from amphoreus_graph.contracts.world_base import WorldBase

    class Orchard(WorldBase):
        name, title = "orchard", "The Orchard"
        def genesis(self, cycle): ...
        def perceive(self, state, agent): ...
        def resolve(self, state, decisions, rng, now, round_limit): ...
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod

from amphoreus_graph.contracts.actions import ActionSpec
from amphoreus_graph.contracts.memory import Moment, gist
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.contracts.world import (
    AgentProfile,
    AgentView,
    Critique,
    CycleEnd,
    Perception,
    Resolution,
    WorldLabels,
    WorldState,
    WorldView,
)


class WorldBase(ABC):
    """A `World` whose optional parts have defaults. States are dicts with integer `cycle` and `round`, and the
    defaults read an optional `outcome` (the ending's id once the cycle has ended)."""

    name: str = "world"
    title: str = "A world"
    description: str = ""
    labels: WorldLabels = WorldLabels()
    agents: list[AgentProfile]
    actions: dict[str, ActionSpec]
    rounds_per_cycle: int = 10

    @abstractmethod
    def genesis(self, cycle: int) -> WorldState:
        """The world at the start of a cycle."""

    @abstractmethod
    def perceive(self, state: WorldState, agent: str) -> Perception:
        """What one agent sees and may do now."""

    @abstractmethod
    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        """All of a round's decisions at once: the new state (with `outcome` set if the cycle ended) and events."""

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        """The round counter advanced; every acting agent told the same plain situation."""
        opened = {**state, "round": int(state["round"]) + 1}
        situation = f"Round {opened['round']} begins in {self.title}."
        return opened, dict.fromkeys(self.actors(opened), situation)

    def actors(self, state: WorldState) -> list[str]:
        """Every agent, in the world's order."""
        return [a.name for a in self.agents]

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        """Recall looks for the situation's gist."""
        return f"{gist(situation)}. {agent}."

    def outcome(self, state: WorldState) -> str | None:
        found = state.get("outcome")
        return str(found) if found else None

    def end(self, state: WorldState) -> CycleEnd:
        """The state's outcome (the round limit if none), told plainly, with no score."""
        outcome = self.outcome(state) or "round_limit"
        return CycleEnd(outcome=outcome, text=f"The cycle of {self.title} ended ({outcome.replace('_', ' ')}).")

    def view(self, state: WorldState) -> WorldView:
        """Each agent by name, nothing more."""
        return WorldView(
            cycle=int(state["cycle"]),
            round=int(state["round"]),
            outcome=self.outcome(state),
            agents={a.name: AgentView() for a in self.agents},
        )

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        """Only an action the turn did not offer."""
        if decision.action in turn.offered:
            return []
        return [Critique(cost=0.5, reason=f"{decision.action} is not possible for {turn.agent} now")]

    def vocabulary(self) -> set[str]:
        return {a.name for a in self.agents}
