"""`record` asks for each turn again from the state the fan-out built it from: the same turn comes back only
for exactly the same inputs (society/perception.py TurnMemo)."""

from __future__ import annotations

import copy

from amphoreus_graph.catalogs.scenario import load_scenario, scenario_of
from amphoreus_graph.society.perception import TurnMemo, build_turn


def test_a_turn_is_reused_only_for_the_same_scenario_and_equal_inputs() -> None:
    scenario = scenario_of("trio")
    world = scenario.world.genesis(1)
    built: list[str] = []

    def turn(world_state, situation="the round opens", seed=1, scenario=scenario):  # type: ignore[no-untyped-def]
        def build():  # type: ignore[no-untyped-def]
            built.append(situation)
            return build_turn("Cyrene", world_state, scenario, situation=situation, memories=[], seed=seed, run_id="r")

        return memo.get(("r", "Cyrene"), (scenario, world_state, situation, [], seed), build)

    memo = TurnMemo()
    first = turn(world)
    assert turn(copy.deepcopy(world)) is first, "an equal world, another dict: the same turn"
    assert len(built) == 1
    moved = copy.deepcopy(world)
    moved["round"] = int(moved["round"]) + 1
    assert turn(moved).round == first.round + 1
    assert turn(world, situation="a storm").situation == "a storm"
    assert turn(world, seed=2).seed == 2
    again = load_scenario("trio")  # the same scenario read again, another object: built again
    assert turn(world, scenario=again) is not first
    assert len(built) == 5


def test_the_memo_forgets_the_oldest_turns_past_its_size() -> None:
    scenario = scenario_of("trio")
    world = scenario.world.genesis(1)
    memo = TurnMemo(size=2)
    for run in ("a", "b", "c"):
        memo.get(
            (run, "Cyrene"),
            (scenario, world),
            lambda run=run: build_turn(  # type: ignore[misc]
                "Cyrene", world, scenario, situation="", memories=[], seed=1, run_id=run
            ),
        )
    rebuilt: list[str] = []
    memo.get(
        ("a", "Cyrene"),
        (scenario, world),
        lambda: (
            rebuilt.append("a")
            or build_turn(  # type: ignore[func-returns-value]
                "Cyrene", world, scenario, situation="", memories=[], seed=1, run_id="a"
            )
        ),
    )
    assert rebuilt == ["a"]
