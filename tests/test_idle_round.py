"""A round in which no agent may act is still a round: the world resolves it, time passes, the cycle goes on."""

from __future__ import annotations

import json

import pytest
import yaml

from amphoreus_graph.layout import RunDir


def _idle_world(cli, tmp_path, write_behind):
    """The starter world with every action offered in round 1 only: from round 2 on, no one may act."""
    code, _, err = cli("new-world", "idle", "--where", str(tmp_path))
    assert code == 0, err
    path = tmp_path / "idle" / "idle.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    for action in spec["actions"]:
        action["when"] = {**(action.get("when") or {}), "round": {"max": 1}}
    spec["memory"] = {**(spec.get("memory") or {}), "write_behind": write_behind}
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("write_behind", [True, False])
def test_a_round_no_one_can_act_in_is_played_and_the_cycles_go_on(cli, tmp_path, write_behind):
    scenario = _idle_world(cli, tmp_path, write_behind)
    run = tmp_path / "run"
    code, out, err = cli(
        "simulate", "--scenario", str(scenario), "--cycles", "2", "--rounds", "5", "--out", str(run), "--quiet"
    )
    assert code == 0, out + err
    summary = json.loads(RunDir(run).summary.read_text())
    assert [c["cycle"] for c in summary["cycles"]] == [1, 2]
    assert [c["rounds"] for c in summary["cycles"]] == [5, 5]
    for cycle in (1, 2):
        rounds = [json.loads(line)["round"] for line in (RunDir(run).chronicle / f"cycle-{cycle:04d}.jsonl").open()]
        assert rounds == [1, 2, 3, 4, 5], "every round is in the chronicle, the idle ones too"
    assert summary["turns"] == 2 * 3, "only round 1 of each cycle had turns (three agents)"
