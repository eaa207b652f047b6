"""A run's loaded scenario travels in its services: graph nodes, edges and the policy take the world and the Path
catalog from there, never by looking the scenario's name up in the process (issue 36, item 3)."""

from __future__ import annotations

import pytest

from amphoreus_graph.catalogs import scenario as scenarios
from amphoreus_graph.catalogs.scenario import catalog_of_turn, load_scenario, scenario_of
from amphoreus_graph.contracts.turn import TurnContext
from amphoreus_graph.society.perception import build_turn
from amphoreus_graph.society.runner import RunConfig, Simulation


def test_a_turn_posed_in_a_run_carries_the_runs_catalog_and_a_recorded_one_names_it() -> None:
    own = load_scenario("trio")  # the run's own copy, not the process's
    turn = build_turn("Cyrene", own.world.genesis(1), own, situation="", memories=[], seed=1, run_id="r")
    assert turn.world == "trio"
    assert catalog_of_turn(turn) is own.catalog
    assert catalog_of_turn(turn.as_recorded()) is own.catalog, "a copy of the turn keeps what it was posed with"
    read_back = TurnContext.model_validate_json(turn.model_dump_json())
    assert read_back.loaded_scenario is None, "the loaded scenario is never serialised"
    assert catalog_of_turn(read_back) is scenario_of("trio").catalog


async def test_a_run_never_looks_its_scenario_up_by_name(tmp_path, monkeypatch) -> None:
    run = Simulation(RunConfig(scenario="trio", cycles=2, rounds=3, seed=3, out=tmp_path / "run"))
    assert run.scenario.name  # read once, by the run, before it starts

    def looked_up(name: str) -> None:
        raise AssertionError(f"the scenario {name!r} was looked up by name during the run")

    scenario_of.cache_clear()
    monkeypatch.setattr(scenarios, "load_scenario", looked_up)
    summary = await run.run()
    assert summary.turns > 0 and len(summary.cycles) == 2
    scenario_of.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_scenarios():
    yield
    scenario_of.cache_clear()
