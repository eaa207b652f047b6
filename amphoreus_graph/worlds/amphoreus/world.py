"""Amphoreus as a world plug-in: the twelve Chrysos Heirs on the Flame-Chase for the Titans' Coreflames while
the Black Tide rises, directed by Lycurgus. Everything that names this world's concepts lives in this folder."""

from __future__ import annotations

import random
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from amphoreus_graph.contracts.actions import ActionSpec, TargetKind
from amphoreus_graph.contracts.memory import Moment, gist
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
from amphoreus_graph.errors import ScenarioError, format_validation_error
from amphoreus_graph.worlds.amphoreus.rules import resolve_round
from amphoreus_graph.worlds.amphoreus.schema import AmphoreusSpec, check_references
from amphoreus_graph.worlds.amphoreus.state import AmphoreusState, Outcome

OUTCOME_TEXT = {
    Outcome.ERA_NOVA: "every Coreflame reached the Vortex and Era Nova dawned",
    Outcome.BLACK_TIDE: "the Black Tide swallowed the world",
    Outcome.ALL_FALLEN: "every heir fell",
    Outcome.ROUND_LIMIT: "the journey ran out of time",
}
# Words of this world a heir may say without naming anything unknown (the judges' knowledge check).
TERMS = {"Titan", "Titans", "Coreflame", "Coreflames", "Black Tide", "Tide", "Black", "Amphoreus", "Heir", "Heirs"}
TERMS |= {"Chrysos", "Vortex", "Genesis", "Era Nova", "Path", "Aeon"}


@cache
def amphoreus_actions() -> dict[str, ActionSpec]:
    """The fourteen actions of the Flame-Chase, in offer order (`_actions.yaml`)."""
    source = resources.files("amphoreus_graph.worlds.amphoreus").joinpath("_actions.yaml")
    specs = TypeAdapter(list[ActionSpec]).validate_python(yaml.safe_load(source.read_text(encoding="utf-8")))
    return {spec.name: spec for spec in specs}


class AmphoreusWorld:
    """The Flame-Chase, over a spec (the default `amphoreus` scenario, or `trio` for tests)."""

    def __init__(self, spec: AmphoreusSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.title = spec.title
        self.description = spec.description
        self.rounds_per_cycle = spec.rounds_per_cycle
        # the optional plug-in attribute the benchmark reads its items' prose from (bench/prose.py)
        self.bench_prose = Path(__file__).with_name("bench") / "prose.yaml"
        self.actions = amphoreus_actions()
        self._briefs = {name: dict(spec.brief()) for name, spec in self.actions.items()}
        self.labels = WorldLabels(
            agent="heir",
            agents="heirs",
            role="a Chrysos Heir of Amphoreus",
            director=spec.director,
            objective="Coreflame",
            objectives="Coreflames",
            score="Coreflames",
        )
        self.agents = [
            AgentProfile(
                name=h.name,
                title=h.title,
                path=h.path,
                secondary_path=h.secondary_path,
                persona=h.persona,
                traits=h.traits,
                relationships=h.relationships,
            )
            for h in spec.heirs
        ]

    def _state(self, state: WorldState) -> AmphoreusState:
        return AmphoreusState.model_validate(state)

    def genesis(self, cycle: int) -> WorldState:
        return AmphoreusState.genesis(self.spec, cycle).model_dump(mode="json")

    def actors(self, state: WorldState) -> list[str]:
        return self._actors(self._state(state))

    def _actors(self, world: AmphoreusState) -> list[str]:
        return [h for h in self.spec.heir_names if not world.heirs[h].fallen]

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        """Lycurgus opens a round: one flavour event per location, plus the stakes of the Flame-Chase."""
        world = self._state(state)
        world.round += 1
        templates = self.spec.situations or ["Another day passes at {location}."]
        flavour = {
            loc.name: templates[rng.randrange(len(templates))].format(location=loc.name) for loc in self.spec.locations
        }
        stakes = (
            f"{self.spec.director} watches over the Flame-Chase: {len(world.delivered)} of "
            f"{len(self.spec.titans)} Coreflames delivered, {len(world.free_coreflames)} still held by Titans."
        )
        situations = {h: f"{flavour[world.heirs[h].location]} {stakes}" for h in self._actors(world)}
        return world.model_dump(mode="json"), situations

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        seeks = self.spec.titan(self.spec.heir(agent).seeks)
        where = self._state(state).heirs[agent].location
        return f"{gist(situation)}. {agent} seeks the {seeks.coreflame} of {seeks.name} at {where}."

    def perceive(self, state: WorldState, agent: str) -> Perception:
        world = self._state(state)
        me = world.heirs[agent]
        heir = self.spec.heir(agent)
        options = self._options(agent, world)
        return Perception(
            location=me.location,
            aim=f"the Coreflame of the Titan {heir.seeks}",
            aim_target=heir.seeks,
            status={
                "health": f"{me.health:.0f}/100",
                "Coreflames you hold": ", ".join(me.holding) or "none",
                "Black Tide": f"{world.black_tide:.0f}/{self.spec.black_tide.limit:.0f}",
            },
            observations=self._observations(agent, world),
            options=options,
            pressures=self._pressures(agent, world, options),
            trust=dict(world.trust[agent]),
        )

    def _options(self, agent: str, world: AmphoreusState) -> list[Option]:
        """Every action the heir may take now, with its valid targets."""
        others = [h for h in self._actors(world) if h != agent]
        here = world.heirs[agent].location
        targets: dict[TargetKind, list[str]] = {
            TargetKind.NONE: [],
            TargetKind.AGENT: others,
            TargetKind.OBJECTIVE: list(world.free_coreflames),
            TargetKind.LOCATION: [loc.name for loc in self.spec.locations if loc.name != here],
        }
        options = []
        for name, spec in self.actions.items():
            allowed = [agent, *others] if name == "defend" else targets[spec.target]
            if spec.target is not TargetKind.NONE and not allowed:
                continue
            if name == "deliver_coreflame" and not world.heirs[agent].holding:
                continue
            # built from validated specs every turn: constructed, not validated again
            options.append(Option.model_construct(action=name, targets=allowed, **self._briefs[name]))
        return options

    def _pressures(self, agent: str, world: AmphoreusState, options: list[Option]) -> dict[str, float]:
        """What the situation urges beyond a heir's Path: deliver what you hold, chase your own Coreflame, push
        back a high Tide, rest when badly hurt, do not tend others when hurt yourself."""
        me, seeks = world.heirs[agent], self.spec.heir(agent).seeks
        offered = {o.action: o.targets for o in options}
        pressures = {
            "deliver_coreflame": 1.5,
            "seek_coreflame": 0.6 if seeks in offered.get("seek_coreflame", []) else 0.0,
            "fight_tide": world.black_tide / 100.0,
            "withdraw": 0.5 if me.health < 30 else 0.0,
            "aid": -0.3 if me.health < 50 else 0.0,
        }
        return {action: value for action, value in pressures.items() if action in offered and value}

    def _observations(self, agent: str, world: AmphoreusState) -> list[str]:
        """Public facts a heir can see: who is nearby, who holds what, who has fallen."""
        me = world.heirs[agent]
        nearby = [h for h in world.heirs_at(me.location) if h != agent]
        seen = [f"Present at {me.location}: {', '.join(nearby) if nearby else 'nobody else'}."]
        for other in self.spec.heir_names:
            state = world.heirs[other]
            if other != agent and state.holding:
                flames = ", ".join(self.spec.titan(t).coreflame for t in state.holding)
                seen.append(f"{other} carries {flames}.")
            if other != agent and state.fallen:
                seen.append(f"{other} has fallen.")
        return seen

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        world, events = resolve_round(
            self._state(state), self.spec, self.actions, decisions, rng, now.tick, round_limit
        )
        return Resolution(state=world.model_dump(mode="json"), events=events)

    def outcome(self, state: WorldState) -> str | None:
        outcome = state.get("outcome")
        return str(outcome) if outcome else None

    def end(self, state: WorldState) -> CycleEnd:
        world = self._state(state)
        outcome = world.outcome or Outcome.ROUND_LIMIT
        return CycleEnd(
            outcome=outcome.value,
            text=(
                f"Cycle {world.cycle} ended after {world.round} rounds: {OUTCOME_TEXT[outcome]}. "
                f"{len(world.delivered)} of {len(self.spec.titans)} Coreflames were delivered."
            ),
            score=float(len(world.delivered)),
            tally={name: float(count) for name, count in world.coreflames_per_heir().items()},
            facts={
                "black_tide": world.black_tide,
                "coreflames_delivered": len(world.delivered),
                "fallen": sorted(h for h, s in world.heirs.items() if s.fallen),
            },
        )

    def view(self, state: WorldState) -> WorldView:
        world = self._state(state)
        delivered = set(world.delivered)
        return WorldView(
            cycle=world.cycle,
            round=world.round,
            outcome=world.outcome.value if world.outcome else None,
            agents={
                name: AgentView(
                    location=heir.location,
                    active=not heir.fallen,
                    fields={
                        "health": f"{heir.health:.0f}",
                        "holding": ", ".join(heir.holding),
                        "delivered": ", ".join(heir.delivered),
                    },
                )
                for name, heir in world.heirs.items()
            },
            gauges=[Gauge(name="Black Tide", value=world.black_tide, high=self.spec.black_tide.limit)],
            objectives={
                t.name: "delivered" if t.name in delivered else f"held by {holder}" if holder else "with its Titan"
                for t in self.spec.titans
                for holder in [world.holder_of(t.name)]
            },
            trust=world.trust,
            score={name: float(count) for name, count in world.coreflames_per_heir().items()},
        )

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        """What a heir of Amphoreus would call unwise given the Tide and its wounds."""
        tide = _number(turn.status.get("Black Tide"))
        health = _number(turn.status.get("health"), default=100.0)
        checks = [
            (decision.action == "withdraw" and tide > 70, 0.45, "withdraws while the Black Tide rises"),
            (decision.action == "fight_tide" and tide < 15, 0.3, "fights a Tide that is low"),
            (decision.action == "aid" and health < 30, 0.2, "tends others while badly wounded"),
            (decision.action in ("jest", "study") and tide > 85, 0.2, "idles while the world drowns"),
        ]
        return [Critique(cost=cost, reason=reason) for failed, cost, reason in checks if failed]

    def vocabulary(self) -> set[str]:
        names = {loc.name for loc in self.spec.locations} | {t.name for t in self.spec.titans}
        names |= {t.coreflame for t in self.spec.titans} | {self.spec.director}
        return names | TERMS


def _number(text: str | None, default: float = 0.0) -> float:
    """The leading number of a status line such as '34/100'."""
    try:
        return float((text or "").split("/")[0])
    except ValueError:
        return default


def load_world(raw: dict[str, Any], source: Path) -> AmphoreusWorld:
    """The `amphoreus` world plug-in: its own schema, checked, as a World."""
    try:
        spec = AmphoreusSpec.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(format_validation_error(str(source), exc)) from None
    problem = check_references(spec)
    if problem is not None:
        field, expected = problem
        raise ScenarioError(f"{source}: {field}: {expected}")
    return AmphoreusWorld(spec)
