"""What each agent knows as its turn starts: who it is (from the scenario), what its world shows it (the world's
perception) and what it recalls (from memory), assembled into the TurnContext a policy decides on.

Each offered option carries its action's brief (help, tags, verb…) from the world's declared actions, so a turn
read back from a sample needs no world. A turn never travels in the graph's state: it is built where it is needed
from the state the round's step started from (society/step_state.py), and built once (TurnMemo).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from typing import Any

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.turn import RecalledMemory, TurnContext
from amphoreus_graph.contracts.world import WorldState


def persona(scenario: Scenario, agent: str) -> dict[str, Any]:
    """Who an agent is, as every prompt of it says: its world and role there, name, title, persona, traits, Paths."""
    profile = scenario.agent(agent)
    return {
        "world": scenario.ref,
        "role": scenario.world.labels.role,
        "agent": agent,
        "title": profile.title,
        "persona": profile.persona,
        "traits": profile.traits,
        "path": profile.path,
        "secondary_path": profile.secondary_path,
    }


def build_turn(
    agent: str,
    state: WorldState,
    scenario: Scenario,
    *,
    situation: str,
    memories: list[RecalledMemory],
    seed: int,
    run_id: str,
) -> TurnContext:
    seen = scenario.world.perceive(state, agent)
    return TurnContext(
        run_id=run_id,
        seed=seed,
        cycle=int(state["cycle"]),
        round=int(state["round"]),
        **persona(scenario, agent),
        aim=seen.aim,
        aim_target=seen.aim_target,
        location=seen.location,
        status=seen.status,
        situation=situation,
        observations=seen.observations,
        memories=memories,
        options=[with_brief(option.action, option.targets, scenario) for option in seen.options],  # type: ignore[misc]
        pressures=seen.pressures,
        trust=seen.trust,
    )


def with_brief(action: str, targets: list[str], scenario: Scenario) -> dict[str, Any]:
    """An offered action as a policy sees it (as the fields of an Option, validated with its turn): its targets,
    and its brief from the world's declared actions."""
    return {**briefs(scenario)[action], "action": action, "targets": targets}


@cache
def briefs(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """Each declared action's brief as keyword arguments, worked out once per scenario (a scenario is read once
    per process, and these are asked for every option of every turn)."""
    return {name: spec.brief().model_dump() for name, spec in scenario.world.actions.items()}


class TurnMemo:
    """The turn last built for each agent of each run, handed out again for exactly the same inputs.

    `record` builds every turn of the round again from the state `agent_turn` built it from (so that turns need not
    travel in checkpoints), and a world's perception is most of what a turn costs the framework. A turn is reused
    only if the scenario is the same object and the world, situation, recalled memories and seed compare equal;
    anything else (another round, a resumed run, a rebuilt shard) builds it afresh."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._turns: OrderedDict[tuple[str, str], tuple[tuple[Any, ...], TurnContext]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str], inputs: tuple[Any, ...], build: Callable[[], TurnContext]) -> TurnContext:
        with self._lock:
            kept = self._turns.get(key)
        if kept is not None and _same(kept[0], inputs):
            return kept[1]
        turn = build()
        with self._lock:
            self._turns[key] = (inputs, turn)
            self._turns.move_to_end(key)
            while len(self._turns) > self._size:
                self._turns.popitem(last=False)
        return turn


def _same(kept: tuple[Any, ...], inputs: tuple[Any, ...]) -> bool:
    """The scenario by identity (a scenario object is built once per spec), everything else by value."""
    return kept[0] is inputs[0] and kept[1:] == inputs[1:]
