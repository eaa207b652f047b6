"""Models per agent or per Path: one society, several deciders, each sample saying which decided."""

from __future__ import annotations

from amphoreus_graph.society.samples import read_samples


def test_an_agent_and_a_path_each_get_their_own_model(cli, tmp_path):
    run = tmp_path / "routed"
    code, out, err = cli(
        "simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "2", "--out", str(run), "--quiet",
        "--model-for", "Cyrene=scripted:seed=1", "--model-for", "Destruction=random",
    )  # fmt: skip
    assert code == 0, out + err
    deciders = {(s.agent, s.decided_by) for s in read_samples(run / "samples")}
    assert deciders == {
        ("Cyrene", "scripted:seed=1"),
        ("Phainon", "random"),  # Phainon walks Destruction
        ("Anaxagoras", "offline"),
    }


def test_a_route_to_no_agent_or_path_is_one_line(cli, tmp_path):
    code, _, err = cli(
        "simulate", "--scenario", "trio", "--out", str(tmp_path / "r"), "--quiet", "--model-for", "Cyrne=random"
    )  # fmt: skip
    assert code == 2 and "--model-for 'Cyrne'" in err and "Cyrene" in err
    code, _, err = cli("simulate", "--scenario", "trio", "--out", str(tmp_path / "r"), "--quiet", "--model-for", "x")
    assert code == 2 and "expected NAME=MODEL" in err
