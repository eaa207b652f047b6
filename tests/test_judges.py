"""Expert panels and DPO pairs: offline judges on a held-out run, model judges' faults, TRL-format output."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.turn import Decision, Option
from amphoreus_graph.data.dpo import read_judgements
from amphoreus_graph.data.judges import JudgeItem, LLMJudge, OfflineJudge, rules
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.models.gateway import ChatCaller
from amphoreus_graph.policy import discretion
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.society.samples import read_samples

TOY = str(Path(__file__).parent / "worlds" / "toy" / "toy.yaml")
DEFAULT_WORLD = re.compile(
    r"amphoreus|chrysos|coreflame|titan|black tide|lycurgus|vortex|flame-chase|era nova|okhema|\bheirs?\b", re.I
)


@pytest.fixture(scope="module")
def heldout_run(tmp_path_factory):
    """A default-scenario run (12 agents, 12 Paths, real memory) the judges were never calibrated on."""
    out = tmp_path_factory.mktemp("judges") / "heldout"
    asyncio.run(Simulation(RunConfig(scenario="amphoreus", cycles=1, rounds=4, seed=23, out=out)).run())
    return out


@pytest.fixture(scope="module")
def judged(heldout_run, tmp_path_factory):
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    out = tmp_path_factory.mktemp("judged")
    result = CliRunner().invoke(app, ["judge", str(heldout_run), "--out", str(out), "--max-turns", "48", "--seed", "3"])
    assert result.exit_code == 0, result.stdout + result.stderr
    return out, result.stdout


def test_offline_panels_prefer_in_path_decisions_on_heldout_turns(judged):
    out, stdout = judged
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judged_turns"] == 48 and summary["candidates"] == 48 * 5
    # Off-Path alternatives speak in the agent's own voice (so a pair differs in the act, not in a Path's
    # words): the panels must tell them apart by what they do.
    assert summary["in_path_win_rate"] >= 0.7, summary
    # The panels weigh different things: they disagree on some candidate pairs, and the rate is printed.
    assert 0.0 < summary["agreement_rate"] < 1.0
    assert f"{summary['agreement_rate']:.1%}" in stdout
    assert summary["calibration"]["heldout_texts"] > 0
    left_out = summary["dropped_for_balance"]
    assert (f"{left_out} judged turns were left out" in " ".join(stdout.split())) == (left_out > 0)


def test_classifier_is_calibrated_on_disjoint_halves_and_beats_chance(embedder):
    from amphoreus_graph.bench.classifier import PathClassifier

    classifier = PathClassifier(embedder)
    calibration = classifier.calibration
    # Leave-one-out over the prototype texts, the scale fitted on one half, accuracy on the other.
    assert calibration.fit_texts > 0 and calibration.heldout_texts > 0
    paths = len(classifier.paths)
    assert calibration.heldout_accuracy > 5 / paths  # five times chance over 18 Paths
    probabilities = classifier.probabilities(["Knock the whole thing down to the ground; it was wrong from day one."])
    assert classifier.paths[int(probabilities[0].argmax())] == "Destruction"


def _offering(turn, *options: Option):
    """The turn with these options in place of its own of the same names."""
    names = {o.action for o in options}
    return turn.model_copy(update={"options": [o for o in turn.options if o.action not in names] + list(options)})


def test_rules_catch_illogical_and_uninformed_decisions(heldout_run):
    turn = next(s.context for s in read_samples(heldout_run / "samples") if s.context and s.context.trust)
    other = next(iter(turn.trust))
    actions = scenario_of("amphoreus").world.actions
    options = [Option(action=name, targets=[other], **actions[name].brief().model_dump()) for name in ("attack", "aid")]
    trusted = _offering(turn, *options).model_copy(update={"trust": {**turn.trust, other: 0.9}})
    attack = Decision(action="attack", target=other, speech=f"I strike at {other}, though I trust them.")
    aid = Decision(action="aid", target=other, speech=f"I tend to {other}.")
    assert rules.logic(trusted, attack) == (0.55, ["turns on one it trusts"])
    assert rules.logic(trusted, aid)[0] > rules.logic(trusted, attack)[0]
    invalid = Decision(action="attack", target="Nobody")
    assert rules.logic(turn, invalid)[0] == 0.0
    made_up = Decision(action="jest", speech="Ha! I once met Zorblax and Quintessa Vell at Glimmerhold.")
    assert rules.unknown_names(turn, made_up.speech) == ["Zorblax", "Quintessa Vell", "Glimmerhold"]
    assert rules.knowledge(turn, made_up)[0] < rules.knowledge(turn, aid)[0]
    assert rules.narrative(turn, Decision(action="jest", speech=""))[0] == 0.0


def test_neutral_checks_read_the_options_tags_and_the_agents_aim(heldout_run):
    turn = next(s.context for s in read_samples(heldout_run / "samples") if s.context and s.context.trust)
    other = next(iter(turn.trust))
    here = Option(action="explore", target=TargetKind.LOCATION, tags=["travel"], targets=[turn.location, "Elsewhere"])
    shield = Option(action="shelter", target=TargetKind.AGENT, tags=["protection"], targets=[other])
    wary = _offering(turn, here, shield).model_copy(update={"trust": {**turn.trust, other: -0.9}, "world": ""})
    assert rules.logic(wary, Decision(action="explore", target=turn.location)) == (
        0.5,
        ["travels to where it already is"],
    )
    assert rules.logic(wary, Decision(action="explore", target="Elsewhere")) == (1.0, [])
    assert rules.logic(wary, Decision(action="shelter", target=other)) == (0.7, ["helps one it distrusts"])
    aim, rival = turn.aim_target, next(t for t in turn.targets("seek_coreflame") if t != turn.aim_target)
    assert aim in turn.targets("seek_coreflame")
    assert rules.logic(turn, Decision(action="seek_coreflame", target=rival)) == (
        0.8,
        [f"aims at {rival}, not its own aim {aim}"],
    )
    assert rules.logic(turn, Decision(action="seek_coreflame", target=aim)) == (1.0, [])


def test_a_world_critique_reaches_the_judges_logic_score_and_reasons(heldout_run):
    """The world says what its own rules make unwise; a turn posed outside any world gets only neutral checks."""
    turn = next(s.context for s in read_samples(heldout_run / "samples") if s.context)
    rising = turn.model_copy(update={"status": {**turn.status, "Black Tide": "90/100"}})
    withdraw = Decision(action="withdraw", speech="I will let the world turn without me, and rest a while.")
    assert rules.logic(rising, withdraw) == (0.55, ["withdraws while the Black Tide rises"])
    nowhere = rising.model_copy(update={"world": ""})
    assert rules.logic(nowhere, withdraw) == (1.0, [])
    judged, neutral = OfflineJudge().score(
        [JudgeItem(turn=rising, decision=withdraw), JudgeItem(turn=nowhere, decision=withdraw)]
    )
    assert "withdraws while the Black Tide rises" in judged["genius_society"].reasoning
    assert "Black Tide" not in neutral["genius_society"].reasoning
    assert judged["genius_society"].scores["logic"] < neutral["genius_society"].scores["logic"]

    garden = _toy_turn("Ada", fruit=1)
    pick = Decision(action="pick", speech="I pick the very last fruit of the tree.")
    assert rules.logic(garden, pick) == (0.7, ["picks the last fruit"])


def _toy_turn(agent: str, *, fruit: int = 5, ref: str = TOY):
    """A real turn of the toy garden (tests/worlds/toy, or a copy), as perception builds it."""
    from amphoreus_graph.society.perception import build_turn

    scenario = scenario_of(ref)
    state = {**scenario.world.genesis(1), "fruit": fruit}
    return build_turn(agent, state, scenario, situation="Bees hum.", memories=[], seed=1, run_id="t")


def test_a_place_the_world_names_is_known_and_an_unnamed_one_is_not():
    garden = _toy_turn("Ada")
    speech = "Ha! I walked the Little Garden with Bo, then met Zorblax at Glimmerhold."
    assert rules.unknown_names(garden, speech) == ["Zorblax", "Glimmerhold"]
    nowhere = garden.model_copy(update={"world": ""})
    assert rules.unknown_names(nowhere, speech) == ["Little Garden", "Zorblax", "Glimmerhold"]
    speakable = discretion.speakable_texts
    assert "Little Garden" in speakable(garden) and "Little Garden" not in speakable(nowhere)


def test_a_turn_of_a_users_path_catalog_is_judged_and_re_posed_within_it(tmp_path):
    """A scenario on its own Path catalog (here, the toy garden with Ada on a Path the packaged catalog lacks):
    the offline panels score her against that catalog, and off-Path alternatives come from it."""
    import shutil

    import yaml

    from amphoreus_graph.catalogs.paths import load_paths
    from amphoreus_graph.catalogs.scenario import catalog_for
    from amphoreus_graph.data.candidates import off_path_choices

    packaged = load_paths()
    mine = [packaged["Abundance"].model_copy(update={"name": "Orchard", "opposed": []})]
    mine += [packaged[name].model_copy(update={"opposed": []}) for name in ("Propagation", "Erudition")]
    (tmp_path / "paths.yaml").write_text(yaml.safe_dump({"paths": [p.model_dump() for p in mine]}), encoding="utf-8")
    shutil.copytree(Path(TOY).parent, tmp_path, dirs_exist_ok=True)
    raw = yaml.safe_load((tmp_path / "toy.yaml").read_text(encoding="utf-8"))
    raw["agents"][0]["path"] = "Orchard"
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump({**raw, "paths": "paths.yaml"}), encoding="utf-8")

    turn = _toy_turn("Ada", ref=str(tmp_path / "toy.yaml"))
    assert turn.path == "Orchard" and catalog_for(turn.world).names() == ["Orchard", "Propagation", "Erudition"]
    (verdict,) = OfflineJudge().score([JudgeItem(turn=turn, decision=Decision(action="tend", speech="I tend it."))])
    assert "action fits the Path at" in verdict["nameless"].reasoning
    assert set(off_path_choices(catalog_for(turn.world), "Orchard", 0, "t", 5)) == {"Propagation", "Erudition"}


def test_the_model_judges_prompt_speaks_the_turns_world(heldout_run):
    from amphoreus_graph.data.judges.llm import judge_messages

    decision = Decision(action="tend", speech="I water the tree, so it bears for us all.")
    for panel in ("genius_society", "nameless"):
        system, user = (
            str(m.content) for m in judge_messages(panel, JudgeItem(turn=_toy_turn("Ada"), decision=decision))
        )
        assert "The world: The Little Garden. Three neighbours share one fruit tree" in user
        assert (
            "The neighbour: Ada, a neighbour in the little garden." in user and "What the neighbour remembers:" in user
        )
        assert "basket 0" in user and "(tend: water the tree so it bears one more)" in user
        assert not DEFAULT_WORLD.findall(system + user), DEFAULT_WORLD.findall(system + user)
    turn = next(s.context for s in read_samples(heldout_run / "samples") if s.context)
    user = str(judge_messages("genius_society", JudgeItem(turn=turn, decision=decision))[1].content)
    assert f"The heir: {turn.agent}" in user and "Black Tide" in user


def test_model_judge_scores_repairs_and_falls_back(heldout_run):
    samples = read_samples(heldout_run / "samples")[:4]
    items = [JudgeItem(turn=s.context, decision=s.decision) for s in samples]
    steady = ScriptedChatModel()
    verdicts = asyncio.run(LLMJudge(steady, caller=ChatCaller(steady)).ascore(items))
    assert len(verdicts) == 4
    for verdict in verdicts:
        assert set(verdict["nameless"].scores) == {"path_fidelity", "character", "narrative"}
        assert all(1 <= v <= 10 for v in verdict["genius_society"].scores.values())
        assert verdict["nameless"].reasoning and not verdict["nameless"].flags

    sloppy = ScriptedChatModel(garbage_replies=1)  # its first reply is garbage: repaired, not a fallback
    judge = LLMJudge(sloppy, caller=ChatCaller(sloppy, backoff_s=0.001))
    flags = [f for v in asyncio.run(judge.ascore(items)) for p in v.values() for f in p.flags]
    assert "repaired" in flags and judge.stats.model_calls > 8

    broken = ScriptedChatModel(fail_rate=1.0)
    judge = LLMJudge(broken, caller=ChatCaller(broken, attempts=2, backoff_s=0.001))
    verdicts = asyncio.run(judge.ascore(items))
    offline = OfflineJudge().score(items)
    assert all("fallback" in v[p].flags for v in verdicts for p in v)
    assert verdicts[0]["nameless"].scores == offline[0]["nameless"].scores
    assert judge.stats.failures == judge.stats.model_calls == 4 * 2 * 2


def test_dpo_rows_are_trl_conversational_and_load_with_datasets(judged):
    datasets = pytest.importorskip("datasets")
    out, _ = judged
    rows = [json.loads(line) for line in (out / "dpo.jsonl").read_text().splitlines()]
    assert rows
    for row in rows:
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"
        assert row["chosen"] != row["rejected"] and row["margin"] >= 0.5
        Decision.model_validate_json(row["chosen"][0]["content"])
    assert {r["world"] for r in rows} == {"amphoreus"} and {r["agent"] for r in rows} <= set(
        scenario_of("amphoreus").agent_names
    )
    card = (out / "README.md").read_text()
    assert (
        card.startswith("# amphoreus-graph DPO dataset") and f"## Pairs per world\n\n- amphoreus: {len(rows)}\n" in card
    )
    loaded = datasets.load_dataset("json", data_files=str(out / "dpo.jsonl"), split="train")
    assert loaded.num_rows == len(rows)
    try:
        from trl.data_utils import is_conversational
    except ImportError:
        return
    assert all(is_conversational(row) for row in loaded)


def test_export_dpo_filters_and_dedupes(judged, cli, tmp_path):
    out, _ = judged
    code, stdout, _ = cli("export", "dpo", str(out), str(out), "--out", str(tmp_path / "twice"))
    assert code == 0, stdout
    twice = (tmp_path / "twice" / "dpo.jsonl").read_text().splitlines()
    assert len(twice) == len((out / "dpo.jsonl").read_text().splitlines())  # the second copy is all duplicates
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "strict"), "--min-margin", "100")
    assert code == 0 and (tmp_path / "strict" / "dpo.jsonl").read_text() == ""
    unbalanced = ["--keep-act-imbalance"]  # the best turns alone need not balance
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "all"), *unbalanced)
    every = [json.loads(line) for line in (tmp_path / "all" / "dpo.jsonl").read_text().splitlines()]
    best = sorted(r["chosen_score"] for r in every)[len(every) // 2]
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "top"), "--min-score", str(best), *unbalanced)
    top = [json.loads(line) for line in (tmp_path / "top" / "dpo.jsonl").read_text().splitlines()]
    assert code == 0 and 0 < len(top) < len(every) and all(r["chosen_score"] >= best for r in top)
    assert len(top) == sum(r["chosen_score"] >= best for r in every)
    assert "Pairs per Path" in (tmp_path / "top" / "README.md").read_text()
    code, _, stderr = cli("export", "dpo", str(tmp_path), "--out", str(tmp_path / "none"))
    assert code == 2 and "judgements.jsonl: no such file" in stderr


def test_sft_min_judge_score_keeps_only_well_judged_turns(judged, heldout_run, cli, tmp_path):
    out, _ = judged
    scores = {
        j.sample_id: c.score for j in read_judgements(out) for c in j.candidates if c.candidate.origin == "original"
    }
    threshold = sorted(scores.values())[len(scores) // 2]
    code, stdout, _ = cli(
        "export", "sft", str(heldout_run), "--out", str(tmp_path / "sft"),
        "--judged", str(out), "--min-judge-score", str(threshold),
    )  # fmt: skip
    assert code == 0, stdout
    kept = [json.loads(line)["id"] for line in (tmp_path / "sft" / "train.jsonl").read_text().splitlines()]
    assert kept and set(kept) <= {i for i, s in scores.items() if s >= threshold}
    code, _, stderr = cli("export", "sft", str(heldout_run), "--out", str(tmp_path / "x"), "--min-judge-score", "5")
    assert code == 2 and "--judged" in stderr


def test_human_verdicts_decide_pairs(heldout_run, tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from amphoreus_graph.data.experts import build_experts_graph

    graph = build_experts_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "human"}}
    request = {"run_dir": str(heldout_run), "out_dir": str(tmp_path), "max_turns": 2, "human": True}

    async def review() -> dict:
        state = await graph.ainvoke(request, config)
        shown = state["__interrupt__"][0].value
        assert shown["A"]["score"] >= shown["B"]["score"] and "choice" in json.dumps(shown["answer_schema"])
        state = await graph.ainvoke(Command(resume={"choice": "maybe"}), config)
        assert "'A', 'B' or 'tie'" in state["__interrupt__"][0].value["error"]  # asked again, nothing lost
        state = await graph.ainvoke(Command(resume={"choice": "B", "reason": "bolder"}), config)
        return await graph.ainvoke(Command(resume={"choice": "tie"}), config)

    report = asyncio.run(review())["report"]
    assert report["judged_turns"] == 2 and report["pairs"] == report["decided_by_human"] == 1
    row = json.loads((tmp_path / "dpo.jsonl").read_text())
    assert row["decided_by"] == "human" and row["margin"] <= 0  # the human overruled the panels


def test_a_turn_read_back_from_its_sample_renders_the_prompt_the_agent_saw(heldout_run):
    from amphoreus_graph.policy.prompt import render_messages

    samples = read_samples(heldout_run / "samples")
    assert samples and all(render_messages(s.context) == s.messages[:-1] for s in samples)


def test_exported_pairs_are_balanced_by_act_unless_asked_to_keep_the_imbalance(judged, cli, tmp_path):
    out, _ = judged

    def acts(folder: Path) -> tuple[Counter, Counter, int]:
        rows = [json.loads(line) for line in (folder / "dpo.jsonl").read_text().splitlines()]
        chosen = Counter(json.loads(r["chosen"][0]["content"])["action"] for r in rows)
        rejected = Counter(json.loads(r["rejected"][0]["content"])["action"] for r in rows)
        return chosen, rejected, len(rows)

    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "balanced"))
    chosen, rejected, balanced = acts(tmp_path / "balanced")
    assert code == 0 and balanced and chosen == rejected
    assert "balanced by act" in (tmp_path / "balanced" / "README.md").read_text()
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "raw"), "--keep-act-imbalance")
    chosen, rejected, raw = acts(tmp_path / "raw")
    assert code == 0 and raw >= balanced
    assert (chosen != rejected) == (raw > balanced), "pairs are dropped only where the acts were out of balance"


def test_a_moved_run_is_judged_on_the_same_turns(heldout_run, cli, tmp_path):
    """The turns are drawn by the run's name and the seed, not by the directory it lies in."""
    import shutil

    moved = tmp_path / "elsewhere" / heldout_run.name
    shutil.copytree(heldout_run, moved)
    drawn = []
    for run in (heldout_run, moved):
        out = tmp_path / f"judged-{len(drawn)}"
        code, _, err = cli("judge", str(run), "--out", str(out), "--max-turns", "5", "-k", "2", "--seed", "4")
        assert code == 0, err
        drawn.append(sorted(j.sample_id for j in read_judgements(out)))
    assert len(drawn[0]) == 5 and drawn[0] == drawn[1]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_judge_whose_every_verdict_fell_back_stops_with_exit_3_and_writes_nothing(heldout_run, cli, tmp_path):
    """A model whose every reply is unusable judged nothing: the offline panels' verdicts are not written as its
    own, and what an earlier judge wrote there stays as it was."""
    out, small = tmp_path / "judged", ["--max-turns", "3", "-k", "1", "--seed", "2"]
    assert cli("judge", str(heldout_run), "--out", str(out), *small)[0] == 0
    before = _files(out)
    code, stdout, err = cli("judge", str(heldout_run), "--out", str(out), "--judge", "scripted:garbage=1000", *small)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 3 and len(errors) == 1, stdout + err
    assert "no verdict was the model's: all 12 fell back to the offline panels" in errors[0] and "nothing" in errors[0]
    assert _files(out) == before


def test_a_judge_says_how_many_verdicts_fell_back_and_each_pair_carries_its_count(heldout_run, cli, tmp_path):
    """The fidelity panel's every reply is garbage, the soundness panel's fine: half the verdicts are the offline
    panels', said on the terminal, in summary.json and in each DPO row."""
    pytest.importorskip("langchain_openai")
    from tests.openai_server import Behaviour, OpenAIServer

    with OpenAIServer() as server:
        server.schedule = lambda r: Behaviour.GARBAGE if "the fidelity panel" in r.prompt else Behaviour.ANSWER
        out = tmp_path / "judged"
        code, stdout, err = cli(
            "judge", str(heldout_run), "--out", str(out), "--max-turns", "4", "-k", "2", "--seed", "2",
            "--judge", "served", "--base-url", server.url, "--keep-act-imbalance",
        )  # fmt: skip
    assert code == 0, stdout + err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdicts"] == 4 * 3 * 2 and summary["fallbacks"] == 12
    assert "12 of 24 verdicts fell back to the offline panels" in " ".join(stdout.split())
    for judgement in read_judgements(out):
        for candidate in judgement.candidates:
            assert "fallback" in candidate.verdicts["nameless"].flags
            assert "fallback" not in candidate.verdicts["genius_society"].flags
    rows = [json.loads(line) for line in (out / "dpo.jsonl").read_text().splitlines()]
    assert rows and all(row["fallback_verdicts"] == 2 for row in rows)


def test_the_card_says_the_probe_holds_by_construction_when_the_offline_policy_wrote_both_replies(judged):
    out, _ = judged
    pairs = [json.loads(line) for line in (out / "dpo.jsonl").read_text().splitlines()]
    assert pairs and all(p["chosen_writer"] == p["rejected_writer"] == "offline" for p in pairs)
    card = " ".join((out / "README.md").read_text().split())
    assert f"The offline policy wrote both replies of {len(pairs)} of the {len(pairs)} pairs" in card
    assert "holds by construction" in card and "the probe above is no test" in card


def test_with_a_model_proposer_the_probe_is_a_real_test_and_finds_the_writers_style(heldout_run, cli, tmp_path):
    """Pairs with a reply a model wrote may differ in any word: the card probes them apart. Here the scripted
    model's stock phrases are always the rejected reply (the panels prefer the offline policy's recorded turn),
    so a bag of words tells the pairs apart without the act: the probe fails them, as it should."""
    from amphoreus_graph.data.shortcuts import offline_written, probe_pairs

    out = tmp_path / "judged"
    options = ["--proposer", "scripted", "-k", "2", "--max-turns", "48", "--min-margin", "0", "--keep-act-imbalance"]
    code, stdout, err = cli("judge", str(heldout_run), "--out", str(out), "--seed", "4", *options)
    assert code == 0, stdout + err
    pairs = [json.loads(line) for line in (out / "dpo.jsonl").read_text().splitlines()]
    written = [p for p in pairs if not offline_written(p)]
    assert len(written) >= 20 and "scripted" in {p["rejected_writer"] for p in written}
    probe = probe_pairs(written)
    assert probe.beyond_decision is not None and probe.beyond_decision > 0.2, probe
    card = " ".join((out / "README.md").read_text().split())
    assert f"On the {len(written)} pairs with a reply another writer wrote:" in card
    assert f"accuracy {probe.heldout_accuracy:.1%} (mean over 40 random halvings" in card
