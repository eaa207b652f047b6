"""The world interface: everything the society graph asks of the world its agents live in.

A world owns its state (any JSON-able dict, checkpointed by the graph as it is), its map, objectives, clock,
actions and rules, and every text that names its concepts. The engine only calls the methods below and only
reads the shapes defined here, so it never names a world's concepts. Three kinds of world implement it: the
rules kit (most worlds, YAML only), plug-ins (a Python object), and the LLM game master (a world told in prose).
"""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from amphoreus_graph.contracts.actions import ActionSpec
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import CallStats, Decision, Option, TurnContext

# A world's own state: JSON-able, so the graph checkpoints and streams it as it is. It holds at least the integer
# keys `cycle` and `round` (the engine's clock); everything else is the world's.
WorldState = dict[str, Any]


class AgentProfile(BaseModel):
    """Who an agent is, as the engine needs it: a name, a Path, a persona. The world keeps the rest."""

    name: str
    title: str = ""
    path: str
    secondary_path: str | None = None
    persona: str = ""
    traits: list[str] = Field(default_factory=list)
    relationships: dict[str, float] = Field(
        default_factory=dict, description="initial trust in other agents, -1 (enmity) to 1 (devotion)"
    )


class WorldLabels(BaseModel):
    """How the world names things for prompts, the dashboard, the report and the CLI."""

    agent: str = "agent"
    agents: str = "agents"
    role: str = Field(default="", description="how the prompt introduces an agent, e.g. 'a fisher of the bay'")
    director: str = "the narrator"
    objective: str = "objective"
    objectives: str = "objectives"
    score: str = Field(default="score", description="what an agent's tally counts (per-agent score column)")


class Gauge(BaseModel):
    """A number the world shows with its range, e.g. a clock or a shared stock: `value` in [low, high]."""

    name: str
    value: float
    low: float = 0.0
    high: float


class AgentView(BaseModel):
    """One agent as the dashboard and the report show it."""

    location: str | None = None
    active: bool = Field(default=True, description="false once the agent can no longer act this cycle")
    fields: dict[str, str] = Field(default_factory=dict, description="the world's own columns, e.g. health")


class WorldView(BaseModel):
    """What anyone outside the world may see of its state, in the world's own words and units."""

    cycle: int
    round: int
    outcome: str | None = Field(default=None, description="set once the cycle has ended, the outcome's id")
    agents: dict[str, AgentView] = Field(default_factory=dict)
    gauges: list[Gauge] = Field(default_factory=list)
    objectives: dict[str, str] = Field(default_factory=dict, description="objective -> its status, in words")
    trust: dict[str, dict[str, float]] = Field(default_factory=dict)
    score: dict[str, float] = Field(default_factory=dict, description="each agent's tally (see WorldLabels.score)")


class Perception(BaseModel):
    """What the world tells one agent as its turn starts (the engine adds memories and who the agent is)."""

    location: str | None = None
    aim: str = Field(default="", description="what the agent pursues, in words")
    aim_target: str | None = Field(default=None, description="the option target that pursues the aim, if any")
    status: dict[str, str] = Field(default_factory=dict, description="status lines, e.g. {'health': '80/100'}")
    observations: list[str] = Field(default_factory=list)
    options: list[Option] = Field(
        description="the actions allowed now, with their targets; each option's brief (help, tags, verb…) is its "
        "action's in `World.actions` (the engine fills it in from there)"
    )
    pressures: dict[str, float] = Field(default_factory=dict, description="how pressing each option is now")
    trust: dict[str, float] = Field(default_factory=dict)


class CycleEnd(BaseModel):
    """How a cycle ended: its outcome id, a sentence every agent remembers, and the numbers for the summary."""

    outcome: str
    text: str = Field(description="one or two sentences, remembered by every agent as the cycle's echo")
    score: float | None = Field(default=None, description="the world's declared score for the cycle, if any")
    tally: dict[str, float] = Field(default_factory=dict, description="each agent's tally this cycle")
    facts: dict[str, Any] = Field(default_factory=dict, description="the world's own numbers for the summary")


class Resolution(BaseModel):
    """A round resolved: the new state (its outcome set if the cycle ended), what happened (with witnesses), and
    what the world's own model calls cost, if it made any (an LLM game master; flags such as `fallback`)."""

    state: WorldState
    events: list[MemoryEvent] = Field(default_factory=list)
    cost: CallStats = Field(default_factory=CallStats)


class Critique(BaseModel):
    """A world rule a decision breaks, or a choice the world calls unwise: what it costs a judge's logic."""

    cost: float = Field(ge=0, le=1)
    reason: str


@runtime_checkable
class World(Protocol):
    """A world a society lives in. States are the world's own JSON-able dicts; the engine only passes them on."""

    name: str
    title: str
    description: str
    labels: WorldLabels
    agents: list[AgentProfile]
    actions: dict[str, ActionSpec]
    rounds_per_cycle: int

    def genesis(self, cycle: int) -> WorldState:
        """The world at the start of a cycle (every cycle starts from the same world: the reset)."""
        ...

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        """Open a round: advance the round counter and tell each acting agent its situation."""
        ...

    def actors(self, state: WorldState) -> list[str]:
        """The agents who act this round, in the world's order."""
        ...

    def perceive(self, state: WorldState, agent: str) -> Perception:
        """What one agent sees and may do now."""
        ...

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        """What an agent's recall looks for this round."""
        ...

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        """All of a round's decisions at once: the new state (its outcome set if the cycle ended) and what
        happened, with witnesses. Pure given the rng (a replayed round resolves identically), except for a world
        that asks a model, whose replies the engine checkpoints with the round."""
        ...

    def outcome(self, state: WorldState) -> str | None:
        """The cycle's outcome id once it has ended, else None."""
        ...

    def end(self, state: WorldState) -> CycleEnd:
        """How the cycle ended (called once the outcome is set, or at the round limit)."""
        ...

    def view(self, state: WorldState) -> WorldView:
        """The state as the dashboard, the chronicle and the report show it."""
        ...

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        """The world's rules a decision breaks or strains, beyond not being offered (judges' logic)."""
        ...

    def vocabulary(self) -> set[str]:
        """Proper nouns the world accounts for (places, objectives, its own terms): the judges' known names."""
        ...
