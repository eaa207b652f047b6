"""The PES model: pre-training (loss falls, resume is exact), DPO (held-out margin rises), `pes:` as a policy
(constrained decoding) in simulate, bench and judge, and on a world whose actions it never saw."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from amphoreus_graph.bench.items import ChoiceItem, load_items
from amphoreus_graph.bench.tasks.path_choice import choice_turn
from amphoreus_graph.contracts.turn import Option, TurnContext
from amphoreus_graph.data.export import export_sft
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.memory.store import NullMemory
from amphoreus_graph.policy.llm import MalformedOutput, parse_decision
from amphoreus_graph.policy.prompt import decision_json, render_messages
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.society.samples import iter_samples
from amphoreus_graph.train.configs import DpoSettings, PretrainConfig
from amphoreus_graph.train.constrained import _closing_quote, _unescape
from amphoreus_graph.train.corpus import read_sft_rows
from amphoreus_graph.train.dpo import train_dpo
from amphoreus_graph.train.policy import load_pes_policy
from amphoreus_graph.train.pretrain import pretrain
from amphoreus_graph.train.tokenizer import chat_ids

pytest.importorskip("torch", reason="training needs the [train] extra")
pytest.importorskip("trl", reason="training needs the [train] extra")
PRETRAIN_STEPS = 150


@pytest.fixture(scope="module")
def society(tmp_path_factory):
    """A trio run of 6 cycles (72 turns, offline policy) and its SFT export."""
    root = tmp_path_factory.mktemp("train")
    run = root / "run"
    asyncio.run(Simulation(RunConfig(scenario="trio", cycles=6, seed=5, out=run), memory=NullMemory()).run())
    report = export_sft([run], root / "sft")
    assert report.read == 72 and report.rows + report.near_duplicates == 72 and report.rows >= 68
    return run, root / "sft"


@pytest.fixture(scope="module")
def pairs(society, tmp_path_factory):
    """`amphoreus judge` on 48 of the run's 72 turns: offline panels, one DPO pair per turn that has one (all of
    them: so few turns of a trio are too few to balance by act and still train on). Which turns are drawn depends
    on the run's name and the seed, not on where the run lies, so the pairs are the same on every machine."""
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    run, _ = society
    out = tmp_path_factory.mktemp("judged")
    result = CliRunner().invoke(
        app, ["judge", str(run), "--out", str(out), "--max-turns", "48", "--keep-act-imbalance"]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len((out / "dpo.jsonl").read_text().splitlines()) >= 30
    return out


@pytest.fixture(scope="module")
def pretrained(society, tmp_path_factory):
    """The tiny model trained from scratch on the export: about 40-60 s on two CPU cores."""
    _, sft = society
    out = tmp_path_factory.mktemp("pes") / "tiny"
    metrics = pretrain(read_sft_rows([sft]), out, PretrainConfig(base="tiny", steps=PRETRAIN_STEPS, save_every=75))
    return out, metrics


@pytest.mark.slow
def test_pretraining_loss_falls_and_writes_a_loadable_checkpoint(pretrained):
    out, metrics = pretrained
    log = json.loads((out / "train_log.json").read_text())
    losses = [s["loss"] for s in log["steps"]]
    assert [s["step"] for s in log["steps"]] == list(range(1, PRETRAIN_STEPS + 1))
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < first / 5, (first, last)  # from ~6 nats (uniform over the vocab) to well under 1
    assert metrics.tokens_per_s > 0 and all(s["tokens_per_s"] > 0 for s in log["steps"])
    print(f"\npretrain: loss {first:.3f} -> {last:.3f}, {metrics.tokens_per_s:,.0f} tokens/s on {metrics.device}")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    assert tokenizer.chat_template and tokenizer.eos_token == "<|end|>"
    assert (out / "model.safetensors").is_file() and (out / "checkpoint-150").is_dir()


def test_resume_continues_from_the_saved_step_exactly(society, tmp_path):
    _, sft = society
    rows = read_sft_rows([sft])
    config = PretrainConfig(base="tiny", steps=6, save_every=3, batch_size=2)
    once = tmp_path / "once"
    pretrain(rows, once, config)
    uninterrupted = json.loads((once / "train_log.json").read_text())["steps"]
    shutil.rmtree(once / "checkpoint-6")  # as if killed after the checkpoint at step 3
    metrics = pretrain(rows, once, config, resume=True)
    resumed = json.loads((once / "train_log.json").read_text())["steps"]
    assert metrics.resumed_from == 3
    assert [s["step"] for s in resumed] == list(range(1, 7))
    assert [s["loss"] for s in resumed] == [s["loss"] for s in uninterrupted]  # same batches, same state


@pytest.mark.slow
def test_dpo_raises_the_heldout_reward_margin(pretrained, pairs, tmp_path):
    model, _ = pretrained
    out = tmp_path / "dpo"
    settings = DpoSettings(steps=8, beta=0.1, lr=5e-5, heldout=0.2, seed=0)
    metrics = train_dpo(pairs, model, out, settings)
    total = len((pairs / "dpo.jsonl").read_text().splitlines())
    assert metrics.heldout_pairs + metrics.train_pairs == total and abs(metrics.heldout_pairs - 0.2 * total) <= 1
    assert metrics.before.reward_margin == 0.0  # policy = reference before training
    assert metrics.after.reward_margin > metrics.before.reward_margin
    # more held-out pairs ranked right than wrong (a handful of pairs: 5 of 7 on one machine, 6 of 7 on another)
    assert metrics.after.reward_accuracy > 0.5
    # our held-out margin is the one TRL's evaluate() reports (it evaluates in equal batches, whatever the count)
    assert metrics.trl_eval["eval_rewards/margins"] == pytest.approx(metrics.after.reward_margin, abs=1e-3)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["after"]["reward_margin"] == metrics.after.reward_margin
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    print(f"\nDPO held-out: margin {metrics.before.reward_margin} -> {metrics.after.reward_margin}, {metrics.after}")


@pytest.fixture(scope="module")
def pes_run(pretrained, tmp_path_factory):
    """The tiny model drives a trio society on an unseen seed (greedy constrained decoding)."""
    model, _ = pretrained
    policy = resolve_model(f"pes:{model}")
    out = tmp_path_factory.mktemp("pes-run") / "run"
    config = RunConfig(scenario="trio", cycles=1, rounds=4, seed=11, out=out)
    summary = asyncio.run(Simulation(config, policy=policy, memory=NullMemory()).run())
    return policy, summary, out


@pytest.mark.slow
def test_pes_checkpoint_drives_a_simulation_with_parsed_decisions(pretrained, pes_run):
    model, _ = pretrained
    policy, summary, out = pes_run
    stats = policy.stats
    assert summary.samples_written == stats.decisions == 12
    print(f"\npes: {stats.summary()}")
    assert stats.parse_rate >= 0.95 and summary.fallbacks == stats.fallbacks == 0
    assert summary.model_calls == stats.decisions  # one constrained decode per turn, nothing retried
    # on turns like its training data the model itself puts its mass on the offered actions
    assert stats.mean_action_mass > 0.5 and stats.top_choice_rate >= 0.9 and stats.closed_rate >= 0.9
    samples = [json.loads(line) for f in (out / "samples").glob("*.jsonl") for line in f.open()]
    assert {s["model"] for s in samples} == {f"pes:{model}"}
    assert summary.tokens_in > 0 and summary.tokens_out > 0


def _free_greedy(pes, turn) -> str:
    """The reply plain greedy decoding writes after `{"action": "` (the old, unconstrained way)."""
    import torch

    steer = '{"action": "'
    ids = chat_ids(pes.tokenizer, render_messages(turn), generation_prompt=True)
    ids += pes.tokenizer.encode(steer, add_special_tokens=False)
    with torch.inference_mode():
        out = pes.model.generate(
            input_ids=torch.tensor([ids]),
            max_new_tokens=256,
            do_sample=False,
            eos_token_id=pes.tokenizer.eos_token_id,
            pad_token_id=pes.tokenizer.pad_token_id,
        )
    return steer + pes.tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True)


@pytest.mark.slow
def test_constrained_greedy_writes_what_free_greedy_writes_when_the_model_agrees(pes_run):
    """Constraints only remove options: where greedy free decoding would pick the same action and target token
    for token (`top_choice`) and its reply parses, the constrained reply is that same Decision."""
    policy, _, out = pes_run
    turns = [s.context for s in iter_samples(out / "samples")]
    compared = 0
    for turn in turns:
        written = policy.model.write(
            render_messages(turn), turn.options, temperature=None, seed=0, max_field_tokens=policy.max_field_tokens
        )
        assert written.reply == decision_json(written.decision)  # exactly the training format
        try:
            free = parse_decision(_free_greedy(policy.model, turn), turn)
        except MalformedOutput:
            continue
        if written.top_choice:
            compared += 1
            assert written.decision == free
    assert compared >= 0.8 * len(turns)


@pytest.mark.slow
def test_a_fault_falls_back_to_the_offline_policy_and_counts(pretrained, monkeypatch):
    model, _ = pretrained
    policy = resolve_model(f"pes:{model}")
    turn = choice_turn(load_items("path_choice", ChoiceItem, "heldout")[0], seed=0)

    def broken(*args, **kwargs):
        raise RuntimeError("device lost")

    monkeypatch.setattr(policy.model, "write", broken)
    monkeypatch.setattr(policy.model, "choose", broken)  # a choice turn is scored, not written
    result = asyncio.run(policy.adecide(turn))
    assert result.flags == ["fallback"] and "device lost" in result.error
    assert turn.problem_with(result.decision) is None
    assert policy.stats.fallbacks == 1 and policy.parse_rate == 0.0


@pytest.mark.slow
def test_bench_scores_a_pes_checkpoint_without_fallbacks(pretrained, cli, tmp_path):
    model, _ = pretrained
    code, stdout, err = cli("bench", "--model", f"pes:{model}", "--tasks", "path_choice", "--out", str(tmp_path))
    assert code == 0, stdout + err
    row = json.loads((tmp_path / "leaderboard.json").read_text())["models"][0]
    assert row["decisions"] == len(load_items("path_choice", ChoiceItem, "heldout"))
    assert row["fallback_rate"] == 0.0 and 0 <= row["pes_score"] <= 100


@pytest.mark.slow
def test_judge_samples_pes_proposals_at_temperature(society, pretrained, cli, tmp_path):
    (run, _), (model, _) = society, pretrained
    out = tmp_path / "judged"
    args = ["judge", str(run), "--out", str(out), "--proposer", f"pes:{model}", "-k", "2", "--max-turns", "4"]
    code, stdout, err = cli(*args)
    assert code == 0, stdout + err
    judgements = [json.loads(line) for line in (out / "judgements.jsonl").read_text().splitlines()]
    sampled = [c["candidate"] for j in judgements for c in j["candidates"] if c["candidate"]["origin"] == "sampled"]
    assert len(judgements) == 4 and len(sampled) == 8
    assert not any("fallback" in c["flags"] for c in sampled)
    # sampled at temperature 1 and seeded per call: a turn's k samples are draws, not copies
    assert len({json.dumps(c["decision"], sort_keys=True) for c in sampled}) > len(judgements)


def _unseen_world_turn(round_: int) -> TurnContext:
    """A turn of a made-up harbour world posed outside any scenario: the trio-trained model never saw these
    actions, places or agents (the packaged Path catalog frames it, as for any turn without a world)."""
    options = [
        Option(action="light_beacon", targets=["Gull Rock", "North Cape"], help="Kindle a beacon.", tags=["creation"]),
        Option(action="harvest", help="Bring in the kelp before the storm.", tags=["acquisition", "care"]),
        Option(action="ring_bell", targets=["Maren", "Tobin"], help="Warn someone with the bell.", tags=["protection"]),
        Option(action="mend_nets", help="Sit and mend the nets.", tags=["withdrawal"]),
    ]
    return TurnContext(
        run_id="harbour",
        seed=3,
        cycle=1,
        round=round_,
        role="harbour keeper",
        agent="Wenna",
        path=["Preservation", "Abundance", "Erudition", "Destruction"][round_ % 4],
        aim="a lit coast",
        aim_target="North Cape",
        location="the quay",
        status={"lamp oil": str(round_), "storm": "rising"},
        situation="Fog rolls in over the bay; a boat is still out.",
        options=options,
        trust={"Maren": 0.6, "Tobin": -0.2},
    )


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [None, 1.0])
def test_pes_decides_validly_among_actions_it_never_saw_in_training(pretrained, temperature):
    """Constrained decoding scores each offered action as text, so a checkpoint trained on one world still
    writes an offered action with a valid target in another, whatever the world calls its actions."""
    model, _ = pretrained
    policy = load_pes_policy(str(model), temperature=temperature)
    turns = [_unseen_world_turn(r) for r in range(1, 9)]
    results = [asyncio.run(policy.adecide(turn)) for turn in turns]
    for turn, result in zip(turns, results, strict=True):
        assert result.flags == [] and result.error is None  # the model decided, not the fallback
        assert result.decision.action in turn.offered
        assert turn.problem_with(result.decision) is None, result.decision
        assert (result.decision.target is None) == (not turn.targets(result.decision.action))
    assert policy.stats.decisions == len(turns) and policy.stats.fallbacks == 0
    assert 0.0 < policy.stats.mean_action_mass <= 1.0


@pytest.mark.parametrize(
    ("raw", "closes_at", "text"),
    [
        ('I stay." and more', 7, "I stay."),
        (r'He said \"go\" and left", "', 23, 'He said "go" and left'),
        (r'a \\ b" rest', 6, "a \\ b"),  # an escaped backslash does not escape the quote after it
        ("cut mid-escape \\", None, "cut mid-escape "),  # the cap fell between a backslash and its letter
        (r"a \q escape", None, "a q escape"),  # not JSON: the backslash goes
    ],
)
def test_free_text_ends_at_the_first_unescaped_quote_and_unescapes_leniently(raw, closes_at, text):
    end = _closing_quote(raw)
    assert end == closes_at
    assert _unescape(raw if end is None else raw[:end]) == text


def test_missing_inputs_are_one_line(cli, tmp_path):
    code, _, err = cli("train", "pretrain", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert code == 2 and err.count("\n") == 1 and "nope: no such directory" in err
    code, _, err = cli("train", "dpo", "--data", str(tmp_path / "nope"), "--model", str(tmp_path), "--out", "x")
    assert code == 2 and err.count("\n") == 1 and "expected a folder written by `amphoreus judge`" in err
    (tmp_path / "judged").mkdir()
    code, _, err = cli("train", "dpo", "--data", str(tmp_path / "judged"), "--model", str(tmp_path), "--out", "x")
    assert code == 2 and err.count("\n") == 1 and "dpo.jsonl" in err
    with pytest.raises(ModelSpecError, match="no checkpoint there"):
        resolve_model(f"pes:{tmp_path / 'nope'}")


def test_missing_extra_is_one_line_naming_the_extra(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trl", None)  # as if TRL were not installed
    (tmp_path / "judged").mkdir()
    (tmp_path / "judged" / "dpo.jsonl").write_text("")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    model, out = str(tmp_path / "model"), str(tmp_path / "out")
    code, _, err = cli("train", "dpo", "--data", str(tmp_path / "judged"), "--model", model, "--out", out)
    assert code == 2 and err.count("\n") == 1 and "pip install 'amphoreus-graph[train]'" in err


def test_the_cli_does_not_import_torch_at_start():
    code = "import sys, amphoreus_graph.cli; print([m for m in ('torch', 'transformers', 'trl') if m in sys.modules])"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


def test_held_out_pairs_are_evaluated_in_equal_batches():
    """TRL averages its evaluation batches' means: equal batches keep that the mean over pairs."""
    from amphoreus_graph.train.dpo import equal_batches

    assert [equal_batches(n, 4) for n in (7, 8, 6, 9, 1, 0)] == [1, 4, 3, 3, 1, 4]


def test_a_choice_turn_is_answered_by_the_likelihood_of_each_answer_in_the_agents_voice(society, pretrained):
    """Lettered options the model never saw in training: it picks the answer whose text it finds likeliest as
    its speech, wherever that answer is placed, and spends no decoding on letters."""
    (run, _), (model, _) = society, pretrained
    spoken = Counter(s.decision.speech for s in iter_samples(run / "samples") if s.decision.speech)
    familiar = spoken.most_common(1)[0][0]  # a line the model was trained on many times
    strange = ["Zq vork plim tasser grund.", "Oxo fle drammit quisp yelk.", "Brindy wux tollop garn esk."]
    item = load_items("path_choice", ChoiceItem, "heldout")[0]
    policy = load_pes_policy(str(model))
    for place in range(4):
        texts = [*strange[:place], familiar, *strange[place:]]
        options = [Option(action=letter, help=text) for letter, text in zip("ABCD", texts, strict=True)]
        turn = choice_turn(item, seed=0).model_copy(update={"options": options})
        result = asyncio.run(policy.adecide(turn))
        assert result.decision.action == "ABCD"[place] and not result.flags
    assert (policy.stats.written, policy.stats.scored, policy.stats.decisions) == (0, 4, 4)


def test_an_unknown_decoding_dtype_is_one_line():
    with pytest.raises(ModelSpecError, match=r"--dtype 'fp16': expected one of \['fp32', 'bf16'\]"):
        load_pes_policy("no-checkpoint-needed", dtype="fp16")


@pytest.mark.slow
def test_pes_decodes_in_the_dtype_asked_whatever_the_device(pretrained):
    """fp32 by default on every device (a CPU and a GPU table compare decision by decision); bf16 when asked."""
    import torch

    model, _ = pretrained
    default = load_pes_policy(str(model), device="cpu")
    assert default.model.model.dtype == torch.float32 and default.model.dtype == "fp32"
    halved = load_pes_policy(str(model), device="cpu", dtype="bf16")
    assert halved.model.model.dtype == torch.bfloat16 and halved.model is not default.model
    assert asyncio.run(halved.adecide(_unseen_world_turn(1))).decision.action
