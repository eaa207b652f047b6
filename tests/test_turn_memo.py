"""`record` asks for each turn again from the state the fan-out built it from: the same turn comes back only
for exactly the same inputs (society/perception.py TurnMemo, one per run, in its services)."""

from __future__ import annotations

import copy

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.society.perception import TurnMemo, build_turn


def test_a_turn_is_reused_only_for_equal_inputs() -> None:
    scenario = scenario_of("trio")
    world = scenario.world.genesis(1)
    built: list[str] = []

    def turn(world_state, situation="the round opens", seed=1):  # type: ignore[no-untyped-def]
        def build():  # type: ignore[no-untyped-def]
            built.append(situation)
            return build_turn("Cyrene", world_state, scenario, situation=situation, memories=[], seed=seed, run_id="r")

        return memo.get("Cyrene", (world_state, situation, [], seed), build)

    memo = TurnMemo()
    first = turn(world)
    assert turn(copy.deepcopy(world)) is first, "an equal world, another dict: the same turn"
    assert len(built) == 1
    moved = copy.deepcopy(world)
    moved["round"] = int(moved["round"]) + 1
    assert turn(moved).round == first.round + 1
    assert turn(world, situation="a storm").situation == "a storm"
    assert turn(world, seed=2).seed == 2
    assert len(built) == 4


def test_the_memo_holds_one_turn_per_agent() -> None:
    """A round's turn replaces the agent's last one, so a run's memo never holds more than a round."""
    scenario = scenario_of("trio")
    memo = TurnMemo()
    for round_ in range(1, 4):
        world = scenario.world.genesis(1) | {"round": round_}
        for agent in scenario.agent_names:
            memo.get(
                agent,
                (world,),
                lambda a=agent, w=world: build_turn(  # type: ignore[misc]
                    a, w, scenario, situation="", memories=[], seed=1, run_id="r"
                ),
            )
    assert len(memo) == len(scenario.agent_names)
