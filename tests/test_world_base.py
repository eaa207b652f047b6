"""A plug-in that writes only what a world must (genesis, perceive, resolve) is a whole World: WorldBase gives
the rest, and the world runs through the society, the judges and the report."""

from __future__ import annotations

import json
import random
from pathlib import Path

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.contracts.world import World

BELLS = Path(__file__).parent / "worlds" / "tiny" / "bells.yaml"


def test_a_world_base_subclass_is_a_world_with_defaults():
    world = load_scenario(str(BELLS)).world
    assert isinstance(world, World)
    framed, situations = world.frame(world.genesis(1), random.Random(0))
    assert framed["round"] == 1 and situations == dict.fromkeys(["Ilse", "Bram"], "Round 1 begins in The Bell Tower.")
    assert world.actors(framed) == ["Ilse", "Bram"] and world.outcome(framed) is None
    assert world.memory_query(framed, "Ilse", situations["Ilse"]) == "Round 1 begins in The Bell Tower. Ilse."
    assert world.view(framed).agents.keys() == {"Ilse", "Bram"} and world.vocabulary() == {"Ilse", "Bram"}
    ended = world.end({**framed, "outcome": "pealed"})
    assert ended.outcome == "pealed" and ended.text == "The cycle of The Bell Tower ended (pealed)."
    turn = TurnContext(run_id="t", seed=0, cycle=1, round=1, agent="Ilse", path="Harmony",
                       options=world.perceive(framed, "Ilse").options)  # fmt: skip
    assert world.critique(turn, Decision(action="ring")) == []
    assert world.critique(turn, Decision(action="fly"))[0].reason == "fly is not possible for Ilse now"


def test_a_world_base_world_runs_through_the_society_judges_and_report(cli, tmp_path):
    run = tmp_path / "run"
    code, out, err = cli("simulate", "--scenario", str(BELLS), "--cycles", "2", "--out", str(run), "--quiet")
    assert code == 0, out + err
    summary = json.loads((run / "summary.json").read_text())
    assert [c["outcome"] for c in summary["cycles"]] and all(c["outcome"] for c in summary["cycles"])
    assert cli("judge", str(run), "--max-turns", "4", "-k", "2")[0] == 0
    assert cli("report", str(run))[0] == 0
