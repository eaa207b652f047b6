"""`simulate --live`: the dashboard shows what the run's own events say, round by round."""

from __future__ import annotations

import asyncio

from rich.console import Console

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.live import LiveDashboard
from amphoreus_graph.society.runner import RunConfig, Simulation


def _screen(board: LiveDashboard) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(board.render())
    return console.export_text()


def test_the_dashboard_follows_a_real_run(tmp_path, embedder):
    scenario = scenario_of("trio")
    board = LiveDashboard(scenario, cycles=2, rounds=3, run="live")
    screens: list[tuple[dict, dict[str, str], str]] = []
    actions: dict[str, str] = {}

    async def watch() -> None:
        config = RunConfig(scenario="trio", cycles=2, rounds=3, seed=11, out=tmp_path / "live")
        async for event in Simulation(config).stream():
            board.update(event)
            if event["type"] == "turn_done":
                actions[event["heir"]] = event["action"].replace("_", " ")
            if event["type"] == "round_done":
                screens.append((event, dict(actions), _screen(board)))

    asyncio.run(watch())
    assert len(screens) >= 2
    for event, last_actions, screen in screens:
        assert f"cycle {event['cycle']}/2" in screen and f"round {event['round']}/3" in screen
        assert f"Black Tide {event['black_tide']:.0f}/{scenario.black_tide.limit:.0f}" in screen
        for heir, state in event["heirs"].items():
            row = next(line for line in screen.splitlines() if line.startswith(f"│ {heir} "))
            assert last_actions[heir] in row and state["location"] in row
            assert all(titan in row for titan in state["holding"] + state["delivered"])
    assert "cycle 2 ended" in _screen(board)


def test_simulate_live_prints_the_dashboard(cli, tmp_path):
    code, out, err = cli(
        "simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "2", "--live", "--out", str(tmp_path / "r")
    )
    assert code == 0, err
    assert "Black Tide" in err and "round 2/2" in err and all(h in err for h in ("Cyrene", "Phainon", "Anaxagoras"))
    assert "samples 6" in out


def test_live_with_many_societies_is_one_line(cli, tmp_path):
    code, _, err = cli("simulate", "--live", "--societies", "2", "--out", str(tmp_path / "r"))
    assert code == 2 and "--live shows one society" in err and not (tmp_path / "r").exists()
