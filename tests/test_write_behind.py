"""A round's memories are filed beside the next round's turns (write-behind) or before it (`write_behind: false`);
either way the next round recalls them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
import yaml
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config

from amphoreus_graph.contracts.turn import PolicyResult, TurnContext
from amphoreus_graph.errors import RunStopped
from amphoreus_graph.memory.importance import ModelImportance
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.inspect import inspect_recall, run_memory, unfiled_events
from amphoreus_graph.society.runner import RunConfig, Simulation

TRIO = Path(__file__).resolve().parents[1] / "amphoreus_graph" / "worlds" / "amphoreus" / "trio.yaml"


class Remembering:
    """The offline policy, noting which rounds' memories each turn recalled."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = resolve_model("offline")
        self.seen: dict[tuple[int, int], set[int]] = {}

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        rounds = {m.round for m in turn.memories if m.cycle == turn.cycle and m.kind != "seed"}
        self.seen.setdefault((turn.cycle, turn.round), set()).update(rounds)
        return await self.inner.adecide(turn)


def _scenario(tmp_path: Path, write_behind: bool) -> str:
    spec = yaml.safe_load(TRIO.read_text())
    spec["seeds"] = str(TRIO.parent / spec["seeds"])
    spec["paths"] = str(TRIO.parent / spec["paths"])
    spec["memory"] = {"write_behind": write_behind}
    path = tmp_path / f"trio-{write_behind}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


async def _run(tmp_path: Path, write_behind: bool) -> tuple[Remembering, Simulation]:
    policy = Remembering()
    config = RunConfig(scenario=_scenario(tmp_path, write_behind), cycles=2, seed=3, recall_k=50, out=tmp_path / "run")
    sim = Simulation(config, policy=policy)
    await sim.run()
    return policy, sim


async def test_a_round_written_behind_is_recalled_in_the_very_next_round(tmp_path):
    """Its events are still being filed as the next round decides: recall searches them in process."""
    policy, _ = await _run(tmp_path, write_behind=True)
    assert any(max(r, default=0) == round_ - 1 for (_, round_), r in policy.seen.items() if round_ > 1)


async def test_filing_before_the_next_round_recalls_the_last_one(tmp_path):
    policy, _ = await _run(tmp_path, write_behind=False)
    assert any(max(r, default=0) == round_ - 1 for (_, round_), r in policy.seen.items() if round_ > 1)


async def test_the_last_round_of_a_cycle_is_filed_before_it_ends(tmp_path):
    _, sim = await _run(tmp_path, write_behind=True)
    assert sim.summary is not None
    last = sim.summary.cycles[-1]
    with run_memory(tmp_path / "run") as (_, memory):
        dumped = memory.dump()
    filed = {
        (r["cycle"], r["round"]) for records in dumped["agents"].values() for r in records if r["kind"] != "cycle_echo"
    }
    assert (last.cycle, last.rounds) in filed, "the cycle's last round never reached memory"


def test_a_run_stopped_between_rounds_is_inspected_with_its_last_round(tmp_path, cli):
    """A budget stops the run before its next round: the last round's events are in the checkpoint, not yet in
    the store. `memory inspect` and interviews recall them all the same; `--resume` files them."""
    run = tmp_path / "stopped"
    trio = ["--scenario", "trio", "--cycles", "1", "--rounds", "3", "--quiet", "--model", "scripted:seed=4"]
    code, out, err = cli("simulate", *trio, "--max-calls", "4", "--out", str(run))
    assert code == 3 and "budget spent" in err, out + err
    played = json.loads((run / "summary.json").read_text())["turns"] // 3
    pending = unfiled_events(run)
    assert pending and {e.round for e in pending} == {played}, "the last round played waits in the checkpoint"
    with run_memory(run) as (_, memory):
        filed = {r.round for agent in ("Cyrene", "Phainon", "Anaxagoras") for r in memory.records(agent)}
    assert played not in filed
    _, found = inspect_recall(run, "Cyrene", "what happened", 50)
    assert played in {m.round for m in found if m.cycle == 1}


def test_memory_is_filed_only_once_the_checkpoint_its_step_began_from_is_on_disk(tmp_path, monkeypatch):
    """Checkpoints are written behind the steps (here slowed down, so they lag): a step that files memories waits
    for its own starting checkpoint, so a step redone after a kill never finds a later step's filing in the store."""
    put = AsyncSqliteSaver.aput

    async def lagging_put(self, *args, **kwargs):
        await asyncio.sleep(0.05)
        return await put(self, *args, **kwargs)

    monkeypatch.setattr(AsyncSqliteSaver, "aput", lagging_put)
    run = tmp_path / "run"
    filings: list[bool] = []  # per store write: was the checkpoint its step started from on disk?

    def after_the_checkpoint(method):
        def filing(self, *args, **kwargs):
            (started_from,) = get_config()["configurable"]["checkpoint_map"].values()
            with closing(sqlite3.connect(run / "checkpoint.sqlite")) as db:
                row = db.execute("SELECT 1 FROM checkpoints WHERE checkpoint_id = ?", (started_from,)).fetchone()
            filings.append(row is not None)
            return method(self, *args, **kwargs)

        return filing

    for name in ("remember", "touch", "carry_over"):
        monkeypatch.setattr(Remembrance, name, after_the_checkpoint(getattr(Remembrance, name)))
    config = RunConfig(scenario=_scenario(tmp_path, write_behind=True), cycles=2, rounds=3, seed=3, out=run)
    asyncio.run(Simulation(config).run())
    assert len(filings) >= 8 and all(filings), filings


def _model_config(tmp_path: Path, folder: str, limits: Limits | None = None) -> RunConfig:
    """Six rounds of the trio deciding, rating and reflecting by the scripted model (the same run id in every
    folder)."""
    return RunConfig(
        scenario=_scenario(tmp_path, write_behind=True),
        cycles=1,
        rounds=6,
        seed=3,
        model="scripted:latency=0.05",
        out=tmp_path / folder / "run",
        limits=limits or Limits(),
    )


def _model_run(tmp_path: Path, folder: str) -> Path:
    config = _model_config(tmp_path, folder)
    asyncio.run(Simulation(config).run())
    return config.out


def test_a_filings_model_work_starts_with_the_game_master_and_is_counted_once(tmp_path, monkeypatch):
    """The importance ratings and the reflections write nothing, so the game master starts them (`prepare`), before
    the next round is framed and long before the filing step may write; the filing step claims them: one rating
    call a round, each call counted once in the run's summary, though made on a background thread."""
    order: list[str] = []
    asked_on: list[str] = []
    prepare, recall, touch, ask = Remembrance.prepare, Remembrance.recall, Remembrance.touch, ModelImportance._ask

    def noting(label, method):
        def noted(self, *args, **kwargs):
            order.append(label)
            return method(self, *args, **kwargs)

        return noted

    async def asking(self, texts):
        asked_on.append(threading.current_thread().name)
        return await ask(self, texts)

    monkeypatch.setattr(Remembrance, "prepare", noting("p", prepare))
    monkeypatch.setattr(Remembrance, "recall", noting("c", recall))
    monkeypatch.setattr(Remembrance, "touch", noting("t", touch))
    monkeypatch.setattr(ModelImportance, "_ask", asking)
    run = _model_run(tmp_path, "noted")
    steps = "".join(order)
    filings = steps.count("t")
    # Each round after the first: prepared by its game master, the next round recalls, then its filing step
    # (which finds the work under way) marks what was used; the cycle's last round is filed without a next round.
    assert filings >= 4 and steps.count("pcpt") == filings - 1 and steps.endswith("ppt"), steps
    # A rating call a round (none where every text was rated before), then the cycle's echo, filed at its end.
    *rounds, echo = asked_on
    assert 3 <= len(rounds) <= filings and all(name.startswith("model-ahead") for name in rounds), asked_on
    assert not echo.startswith("model-ahead")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["models"]["importance"]["calls"] == len(asked_on)
    assert summary["models"].get("reflect", {}).get("calls", 0) > 0, "the run reflected"


def test_a_run_is_the_same_with_its_model_work_started_ahead_or_in_the_filing_step(tmp_path, monkeypatch):
    """Samples, chronicle, memory and the counted model calls, byte for byte."""
    ahead = _model_run(tmp_path, "ahead")
    monkeypatch.setattr(Remembrance, "prepare", lambda self, events, reflecting, now: None)
    plain = _model_run(tmp_path, "plain")
    for folder in ("samples", "chronicle"):
        for shard in sorted((plain / folder).glob("*.jsonl")):
            assert (ahead / folder / shard.name).read_bytes() == shard.read_bytes(), f"{folder}/{shard.name}"
    dumps = []
    for run in (ahead, plain):
        with run_memory(run) as (_, memory):
            dumps.append(memory.dump())
    assert dumps[0] == dumps[1] and any(
        r["kind"] == "reflection" for records in dumps[0]["agents"].values() for r in records
    ), "the same memories, reflections among them"
    models = [json.loads((run / "summary.json").read_text())["models"] for run in (ahead, plain)]
    assert models[0].keys() == models[1].keys()
    for role in models[0]:
        assert models[0][role]["calls"] == models[1][role]["calls"], role


def test_a_run_stopped_between_rounds_counts_the_model_work_it_started_ahead(tmp_path, monkeypatch):
    """A budget stops the run as a round opens, after the game master started the last round's ratings: no filing
    step claims them, so the run does, and its summary counts every importance call the model was asked."""
    asked: list[int] = []
    ask = ModelImportance._ask

    async def asking(self, texts):
        asked.append(len(texts))
        return await ask(self, texts)

    monkeypatch.setattr(ModelImportance, "_ask", asking)
    config = _model_config(tmp_path, "stopped", Limits(max_calls=8))
    with pytest.raises(RunStopped):
        asyncio.run(Simulation(config).run())
    run = config.out
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped"] and asked, summary
    assert summary["models"]["importance"]["calls"] == len(asked)
    assert unfiled_events(run), "the round the ratings were for waits in the checkpoint"


def test_the_filing_beside_the_turns_starts_once_their_requests_are_sent(tmp_path, monkeypatch):
    """The filing step's work (access marks, the write, the guess at the next round's queries) waits until the
    gateway has started every request the round's turns handed it: it must not take the CPU from them. Here each
    request's start holds the gateway's loop for 20 ms, so a filing that did not wait would begin between them."""
    import time

    from amphoreus_graph.models.fake import ScriptedChatModel

    order: list[str] = []
    recall, touch, generate = Remembrance.recall, Remembrance.touch, ScriptedChatModel._agenerate

    def noting(label, method):
        def noted(self, *args, **kwargs):
            order.append(label)
            return method(self, *args, **kwargs)

        return noted

    async def slow_to_start(self, messages, *args, **kwargs):
        time.sleep(0.02)  # the gateway's loop is busy starting this request
        order.append("s")
        return await generate(self, messages, *args, **kwargs)

    monkeypatch.setattr(Remembrance, "recall", noting("c", recall))
    monkeypatch.setattr(Remembrance, "touch", noting("t", touch))
    monkeypatch.setattr(ScriptedChatModel, "_agenerate", slow_to_start)
    _model_run(tmp_path, "slow")
    rounds = "".join(order).split("c")[1:]  # from each round's recall on: its turns' requests, then its filing
    filed = [r for r in rounds if "t" in r]
    assert len(filed) >= 4 and all(r.startswith("sss") and r.index("t") >= 3 for r in filed), order


def test_an_offline_run_starts_no_gateway_loop_to_wait_on(tmp_path):
    """The filing step waits for requests sent through the gateway only where something was sent: an offline run
    (no requests at all) never starts the gateway's thread for it."""
    import subprocess
    import sys

    script = (
        "import asyncio, threading, sys\n"
        "from amphoreus_graph.society.runner import RunConfig, Simulation\n"
        f"config = RunConfig(scenario={str(TRIO)!r}, cycles=1, rounds=3, seed=1, out=sys.argv[1])\n"
        "asyncio.run(Simulation(config).run())\n"
        "print(sorted({t.name for t in threading.enumerate()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "run")], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "model-gateway" not in done.stdout, done.stdout
