"""The toy garden (tests/worlds/toy): a world plug-in in one file, which pins the seam between engine and world.

It runs through everything a world must run through, with no file changed outside its own folder: the society
and recurrence graphs, samples, the chronicle and summary, the Scepter (beside another world, in one run).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from amphoreus_graph.scepter import Scepter, ScepterConfig
from amphoreus_graph.society.chronicle import iter_chronicle
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.society.samples import read_samples

TOY = str(Path(__file__).parent / "worlds" / "toy" / "toy.yaml")
DEFAULT_WORLD = re.compile(
    r"amphoreus(?![-_]graph)|chrysos|coreflame|titan|black tide|lycurgus|vortex|flame-chase|era nova|okhema|"
    r"\bheirs?\b",
    re.I,
)


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("toy") / "garden"
    asyncio.run(Simulation(RunConfig(scenario=TOY, cycles=2, rounds=4, seed=3, out=run)).run())
    return run


def test_the_toy_world_lives_through_cycles_and_writes_its_samples(toy_run):
    samples = read_samples(toy_run / "samples")
    assert {s.world for s in samples} == {"toy-garden"}
    assert {s.agent for s in samples} == {"Ada", "Bo", "Cy"}
    assert {s.cycle for s in samples} == {1, 2}
    assert all(s.decision.action in {"pick", "tend", "gift", "rest"} for s in samples)
    assert all(s.context is not None and s.context.problem_with(s.decision) is None for s in samples)
    system, user = samples[0].messages[0]["content"], samples[0].messages[1]["content"]
    assert "a neighbour in the little garden" in system and "You seek a full basket." in system
    assert "basket: 0" in user and "- pick: take a fruit from the tree" in user


def test_the_toy_worlds_chronicle_and_summary_speak_its_own_words(toy_run):
    rounds = list(iter_chronicle(toy_run))
    assert rounds and all(r.world.gauges[0].name == "fruit on the tree" for r in rounds)
    summary = json.loads((toy_run / "summary.json").read_text())
    assert summary["world"] == "toy-garden" and summary["score_label"] == "fruits"
    assert [c["outcome"] for c in summary["cycles"]] and all(
        c["outcome"] in ("bare", "season_over") for c in summary["cycles"]
    )
    assert sum(summary["tally_per_agent"].values()) == sum(c["score"] for c in summary["cycles"])


def test_nothing_the_toy_world_produced_names_the_default_world(toy_run):
    for path in [*toy_run.glob("samples/*.jsonl"), *toy_run.glob("chronicle/*.jsonl"), toy_run / "summary.json"]:
        found = DEFAULT_WORLD.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: {sorted(set(found))}"


def test_a_secret_seed_of_the_toy_world_is_never_said(toy_run):
    bo = [s for s in read_samples(toy_run / "samples") if s.agent == "Bo"]
    assert any("hid two fruits" in m.text for s in bo for m in s.context.memories), "recalled, so this can fail"
    assert not any("hid two fruits" in s.decision.speech for s in read_samples(toy_run / "samples"))


def test_the_scepter_runs_two_worlds_in_one_run(tmp_path):
    template = RunConfig(scenario="trio", cycles=1, rounds=2, seed=5, out=tmp_path / "mixed")
    plan = ScepterConfig(societies=2, scenarios=["trio", TOY], template=template, engine="local")
    summary = asyncio.run(Scepter(plan).run())
    worlds = {s.society: s.world for s in summary.per_society}
    assert sorted(worlds.values()) == ["toy-garden", "trio"]
    for name, world in worlds.items():
        samples = read_samples(tmp_path / "mixed" / "societies" / name / "samples")
        assert samples and {s.world for s in samples} == {world}


def test_the_experts_judge_the_toy_worlds_turns(toy_run, cli, tmp_path):
    code, out, err = cli("judge", str(toy_run), "--out", str(tmp_path / "judged"), "--max-turns", "6", "-k", "2")
    assert code == 0, out + err
    judged = (tmp_path / "judged" / "judgements.jsonl").read_text(encoding="utf-8")
    assert judged.count("\n") == 6 and "toy-garden" in judged
    assert not DEFAULT_WORLD.findall(judged + (tmp_path / "judged" / "dpo.jsonl").read_text(encoding="utf-8"))


def test_the_benchmark_poses_its_items_in_the_toy_world(cli, tmp_path):
    code, out, err = cli(
        "bench", "--model", "offline", "--scenario", TOY, "--tasks", "all", "--split", "heldout",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out + err
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    assert board["settings"]["scenario"] == TOY and board["models"][0]["pes_score"] > 0


def test_the_report_shows_the_toy_world_in_its_own_words(toy_run, cli):
    code, out, err = cli("report", str(toy_run))
    assert code == 0, out + err
    page = (toy_run / "report.html").read_text(encoding="utf-8")
    assert "The Little Garden" in page and "fruit on the tree" in page
    assert not DEFAULT_WORLD.findall(page)
