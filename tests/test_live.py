"""`simulate --live`: the dashboard shows what the run's own events say, round by round."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

from rich.console import Console

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.events import CycleStarted, RoundDone, TurnDone
from amphoreus_graph.live import LiveDashboard
from amphoreus_graph.society.runner import RunConfig, Simulation
from tests.test_toy_world import DEFAULT_WORLD, TOY


def _screen(board: LiveDashboard) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(board.render())
    return console.export_text()


def _row(screen: str, agent: str) -> str:
    return next(line for line in screen.splitlines() if line.startswith(f"│ {agent} "))


def test_the_dashboard_follows_a_real_run(tmp_path, embedder):
    scenario = scenario_of("trio")
    board = LiveDashboard(scenario, cycles=2, rounds=3, run="live")
    genesis = scenario.world.view(scenario.world.genesis(1))
    before = _screen(board)
    for gauge in genesis.gauges:
        assert f"{gauge.name} {gauge.value:g}/{gauge.high:g}" in before, "the world as the cycle starts"
    screens: list[tuple[RoundDone, dict[str, str], str]] = []
    actions: dict[str, str] = {}

    async def watch() -> None:
        config = RunConfig(scenario="trio", cycles=2, rounds=3, seed=11, out=tmp_path / "live")
        async for event in Simulation(config).stream():
            board.update(event)
            if isinstance(event, TurnDone):
                actions[event.agent] = event.action.replace("_", " ")
            if isinstance(event, RoundDone):
                screens.append((event, dict(actions), _screen(board)))

    asyncio.run(watch())
    assert len(screens) >= 2
    for event, last_actions, screen in screens:
        view = event.view
        assert f"cycle {event.cycle}/2" in screen and f"round {event.round}/3" in screen
        assert view["gauges"] and all(f"{g['name']} {g['value']:g}/{g['high']:g}" in screen for g in view["gauges"]), (
            "each gauge in its own range"
        )
        for status, n in Counter(view["objectives"].values()).items():
            assert f"{n} {status}" in screen
        for agent, state in view["agents"].items():
            row = _row(screen, agent)
            assert last_actions[agent] in row and state["location"] in row and scenario.agent(agent).path in row
            assert all(value in row for value in state["fields"].values()), "the world's own columns"
    assert "cycle 2 ended" in _screen(board)


def test_the_dashboard_shows_any_world_in_its_own_words():
    """Another world's gauges, columns and labels, and nothing of the default world's."""
    scenario = scenario_of(TOY)
    world = scenario.world
    board = LiveDashboard(scenario, cycles=1, rounds=4, run="garden")
    board.update(CycleStarted(cycle=1, agents=3))
    assert "fruit on the tree 5/5" in _screen(board), "the world as the cycle starts"
    board.update(TurnDone(agent="Bo", action="pick", target=None, flags=[]))
    state = world.genesis(1) | {"round": 1, "fruit": 4, "picked": 1, "baskets": {"Ada": 0, "Bo": 1, "Cy": 0}}
    view = world.view(state).model_dump(mode="json")
    board.update(RoundDone(cycle=1, round=1, outcome=None, actions={}, targets={}, view=view, models={}))
    screen = _screen(board)
    assert "fruit on the tree 4/5" in screen and "Neighbour" in screen and "basket" in screen
    assert re.search(r"│ Bo .*Propagation.*the garden.*│ 1 .*│ pick", _row(screen, "Bo"))
    assert not DEFAULT_WORLD.search(screen)


def test_simulate_live_prints_the_dashboard(cli, tmp_path):
    code, out, err = cli(
        "simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "2", "--live", "--out", str(tmp_path / "r")
    )
    assert code == 0, err
    gauges = scenario_of("trio").world.view(scenario_of("trio").world.genesis(1)).gauges
    assert all(g.name in err for g in gauges) and "round 2/2" in err
    assert all(name in err for name in scenario_of("trio").agent_names)
    assert "samples 6" in out


def test_live_with_many_societies_is_one_line(cli, tmp_path):
    code, _, err = cli("simulate", "--live", "--societies", "2", "--out", str(tmp_path / "r"))
    assert code == 2 and "--live shows one society" in err and not (tmp_path / "r").exists()


def test_the_dashboard_counts_a_models_calls_by_role(cli, tmp_path):
    code, _out, err = cli(
        "simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "2", "--live", "--out", str(tmp_path / "m"),
        "--model", "scripted:seed=3",
    )  # fmt: skip
    assert code == 0, err
    assert "model calls: decide" in err and "importance" in err
