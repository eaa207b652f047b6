"""What each agent knows as its turn starts: who it is (from the scenario), what its world shows it (the world's
perception) and what it recalls (from memory), assembled into the TurnContext a policy decides on."""

from __future__ import annotations

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.turn import RecalledMemory, TurnContext
from amphoreus_graph.contracts.world import WorldState


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
    profile = scenario.agent(agent)
    seen = scenario.world.perceive(state, agent)
    return TurnContext(
        run_id=run_id,
        seed=seed,
        cycle=int(state["cycle"]),
        round=int(state["round"]),
        world=scenario.ref,
        role=scenario.world.labels.role,
        agent=agent,
        title=profile.title,
        persona=profile.persona,
        traits=profile.traits,
        path=profile.path,
        secondary_path=profile.secondary_path,
        aim=seen.aim,
        aim_target=seen.aim_target,
        location=seen.location,
        status=seen.status,
        situation=situation,
        observations=seen.observations,
        memories=memories,
        options=seen.options,
        pressures=seen.pressures,
        trust=seen.trust,
    )
