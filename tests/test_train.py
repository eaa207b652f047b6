"""The PES model: pre-training (loss falls, resume is exact), DPO (held-out margin rises), `pes:` as a policy."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys

import pytest

from amphoreus_graph.data.export import export_sft
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.memory.store import NullMemory
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.train.configs import PretrainConfig
from amphoreus_graph.train.corpus import read_sft_rows
from amphoreus_graph.train.dpo import DpoSettings, train_dpo
from amphoreus_graph.train.pretrain import pretrain

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
    assert report.rows == 72
    return run, root / "sft"


@pytest.fixture(scope="module")
def pairs(society, tmp_path_factory):
    """`amphoreus judge` on 40 of the run's turns: offline panels, one DPO pair per turn."""
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    run, _ = society
    out = tmp_path_factory.mktemp("judged")
    result = CliRunner().invoke(app, ["judge", str(run), "--out", str(out), "--max-turns", "40"])
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
    config = PretrainConfig(base="tiny", steps=12, save_every=6, batch_size=4)
    once = tmp_path / "once"
    pretrain(rows, once, config)
    uninterrupted = json.loads((once / "train_log.json").read_text())["steps"]
    shutil.rmtree(once / "checkpoint-12")  # as if killed after the checkpoint at step 6
    metrics = pretrain(rows, once, config, resume=True)
    resumed = json.loads((once / "train_log.json").read_text())["steps"]
    assert metrics.resumed_from == 6
    assert [s["step"] for s in resumed] == list(range(1, 13))
    assert [s["loss"] for s in resumed] == [s["loss"] for s in uninterrupted]  # same batches, same state


@pytest.mark.slow
def test_dpo_raises_the_heldout_reward_margin(pretrained, pairs, tmp_path):
    model, _ = pretrained
    out = tmp_path / "dpo"
    metrics = train_dpo(pairs, model, out, DpoSettings(steps=8, beta=0.1, lr=5e-5, heldout=0.2, seed=0))
    assert metrics.heldout_pairs == 8 and metrics.train_pairs == 32
    assert metrics.before.reward_margin == 0.0  # policy = reference before training
    assert metrics.after.reward_margin > metrics.before.reward_margin
    assert metrics.after.reward_accuracy >= 0.75
    # our held-out margin is the one TRL's evaluate() reports
    assert metrics.trl_eval["eval_rewards/margins"] == pytest.approx(metrics.after.reward_margin, abs=1e-3)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["after"]["reward_margin"] == metrics.after.reward_margin
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    print(f"\nDPO held-out: margin {metrics.before.reward_margin} -> {metrics.after.reward_margin}, {metrics.after}")


@pytest.mark.slow
def test_pes_checkpoint_drives_a_simulation_with_parsed_decisions(pretrained, tmp_path):
    model, _ = pretrained
    policy = resolve_model(f"pes:{model}")
    config = RunConfig(scenario="trio", cycles=1, rounds=4, seed=11, out=tmp_path / "pes-run")  # an unseen seed
    summary = asyncio.run(Simulation(config, policy=policy, memory=NullMemory()).run())
    stats = policy.stats  # type: ignore[attr-defined]
    assert summary["samples_written"] == stats.decisions == 12
    print(f"\npes: {stats}, parse rate {policy.parse_rate:.1%}, decisions parsed {stats.decision_rate:.1%}")  # type: ignore[attr-defined]
    assert stats.decision_rate >= 0.95  # no more than 5% of turns fell back to the offline policy
    assert policy.parse_rate >= 0.8  # type: ignore[attr-defined]
    samples = [json.loads(line) for f in (tmp_path / "pes-run" / "samples").glob("*.jsonl") for line in f.open()]
    assert {s["model"] for s in samples} == {f"pes:{model}"}
    assert summary["fallbacks"] == stats.fallbacks and summary["model_calls"] == stats.attempts
    assert summary["tokens_in"] > 0 and summary["tokens_out"] > 0


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
