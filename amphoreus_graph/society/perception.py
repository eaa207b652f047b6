"""What each agent knows as its turn starts: who it is (from the scenario), what its world shows it (the world's
perception) and what it recalls (from memory), assembled into the TurnContext a policy decides on.

Each offered option carries its action's brief (help, tags, verb…) from the world's declared actions, so a turn
read back from a sample needs no world. A turn never travels in the graph's state: it is built where it is needed
from the state the round's step started from (society/step_state.py), and built once (TurnMemo).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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
    ).posed_in(scenario)


def with_brief(action: str, targets: list[str], scenario: Scenario) -> dict[str, Any]:
    """An offered action as a policy sees it (as the fields of an Option, validated with its turn): its targets,
    and its brief from the world's declared actions."""
    return {**scenario.briefs[action], "action": action, "targets": targets}


class TurnMemo:
    """The turn last built for each agent of one run, handed out again for exactly the same inputs.

    `record` builds every turn of the round again from the state `agent_turn` built it from (so that turns need not
    travel in checkpoints), and a world's perception is most of what a turn costs the framework. A turn is reused
    only for equal inputs (the caller's key for the world it was framed in, the situation, recalled memories, seed);
    anything else (another round, a resumed run, a rebuilt shard) builds it afresh. One entry per agent: it holds
    one round's turns at most."""

    def __init__(self) -> None:
        self._turns: dict[str, tuple[tuple[Any, ...], TurnContext]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._turns)

    def get(self, agent: str, inputs: tuple[Any, ...], build: Callable[[], TurnContext]) -> TurnContext:
        with self._lock:
            kept = self._turns.get(agent)
        if kept is not None and kept[0] == inputs:
            return kept[1]
        turn = build()
        with self._lock:
            self._turns[agent] = (inputs, turn)
        return turn
