"""Expert panels and DPO pairs: offline judges on a held-out run, model judges' faults, TRL-format output."""

from __future__ import annotations

import asyncio
import json

import pytest

from amphoreus_graph.actions import Action
from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.data.dpo import read_judgements
from amphoreus_graph.data.judges import JudgeItem, LLMJudge, OfflineJudge, rules
from amphoreus_graph.data.judges.classifier import calibration_texts
from amphoreus_graph.data.samples import read_samples
from amphoreus_graph.policy.fake import ScriptedChatModel
from amphoreus_graph.policy.llm import ChatCaller
from amphoreus_graph.society.runner import RunConfig, Simulation


@pytest.fixture(scope="module")
def heldout_run(tmp_path_factory):
    """A default-scenario run (12 heirs, 12 Paths, real memory) the judges were never calibrated on."""
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
    assert summary["in_path_win_rate"] >= 0.9, summary
    # The panels weigh different things: they disagree on some candidate pairs, and the rate is printed.
    assert 0.0 < summary["agreement_rate"] < 1.0
    assert f"{summary['agreement_rate']:.1%}" in stdout
    assert summary["calibration"]["heldout_texts"] > 0


def test_classifier_is_calibrated_on_disjoint_halves_and_beats_chance(embedder):
    from amphoreus_graph.data.judges.classifier import PathClassifier

    classifier = PathClassifier(embedder)
    texts = calibration_texts()
    fit, heldout = {t for t, _ in texts[0::2]}, {t for t, _ in texts[1::2]}
    assert not fit & heldout
    paths = len(classifier.paths)
    assert classifier.calibration.heldout_accuracy > 5 / paths  # five times chance over 18 Paths
    probabilities = classifier.probabilities(["Ashes and ruin: burn it down, smash it to rubble."])
    assert classifier.paths[int(probabilities[0].argmax())] == "Destruction"


def test_rules_catch_illogical_and_uninformed_decisions(heldout_run):
    turn = next(s.context for s in read_samples(heldout_run / "samples") if s.context and s.context.trust)
    heir = next(iter(turn.trust))
    options = {**turn.options, Action.ATTACK: [heir], Action.AID: [heir]}
    trusted = turn.model_copy(update={"trust": {**turn.trust, heir: 0.9}, "options": options})
    attack = Decision(action="attack", target=heir, speech=f"I strike at {heir}, though I trust them.")
    aid = Decision(action="aid", target=heir, speech=f"I tend to {heir}.")
    assert rules.logic(trusted, attack) == (0.55, ["attacks a heir it trusts"])
    assert rules.logic(trusted, aid)[0] > rules.logic(trusted, attack)[0]
    invalid = Decision(action="attack", target="Nobody")
    assert rules.logic(turn, invalid)[0] == 0.0
    made_up = Decision(action="jest", speech="Ha! I once met Zorblax and Quintessa Vell at Glimmerhold.")
    assert rules.unknown_names(turn, made_up.speech) == ["Zorblax", "Quintessa Vell", "Glimmerhold"]
    assert rules.knowledge(turn, made_up)[0] < rules.knowledge(turn, aid)[0]
    assert rules.narrative(Decision(action="jest", speech=""))[0] == 0.0


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

    sloppy = ScriptedChatModel(malformed_rate=0.5, seed=3)
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
    loaded = datasets.load_dataset("json", data_files=str(out / "dpo.jsonl"), split="train")
    assert loaded.num_rows == len(rows)
    try:
        from trl.data_utils import is_conversational
    except ImportError:
        return
    assert all(is_conversational(row) for row in loaded)


def test_export_dpo_filters_and_dedupes(judged, cli, tmp_path):
    out, _ = judged
    judgements = list(read_judgements(out))
    code, stdout, _ = cli("export", "dpo", str(out), str(out), "--out", str(tmp_path / "twice"))
    assert code == 0, stdout
    twice = (tmp_path / "twice" / "dpo.jsonl").read_text().splitlines()
    assert len(twice) == len((out / "dpo.jsonl").read_text().splitlines())  # the second copy is all duplicates
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "strict"), "--min-margin", "100")
    assert code == 0 and (tmp_path / "strict" / "dpo.jsonl").read_text() == ""
    best = max(j.ranked()[0].score for j in judgements)
    code, _, _ = cli("export", "dpo", str(out), "--out", str(tmp_path / "top"), "--min-score", str(best))
    top = [json.loads(line) for line in (tmp_path / "top" / "dpo.jsonl").read_text().splitlines()]
    assert code == 0 and top and all(r["chosen_score"] >= best for r in top)
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


def test_a_turn_read_back_from_its_sample_renders_the_prompt_the_heir_saw(heldout_run):
    from amphoreus_graph.policy.prompt import render_messages

    samples = read_samples(heldout_run / "samples")
    assert samples and all(render_messages(s.context) == s.messages[:-1] for s in samples)
