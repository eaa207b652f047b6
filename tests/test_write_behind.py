"""A round's memories are filed beside the next round's turns (write-behind) or before it (`write_behind: false`);
either way the next round recalls them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import yaml
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config

from amphoreus_graph.contracts.turn import PolicyResult, TurnContext
from amphoreus_graph.memory.importance import ModelImportance
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.policy.registry import resolve_model
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
    last = sim.summary["cycles"][-1]
    with run_memory(tmp_path / "run") as (_, memory):
        dumped = memory.dump()
    filed = {
        (r["cycle"], r["round"]) for records in dumped["agents"].values() for r in records if r["kind"] != "cycle_echo"
    }
    assert (last["cycle"], last["rounds"]) in filed, "the cycle's last round never reached memory"


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


def test_a_models_ratings_are_asked_once_a_round_before_the_store_is_free(tmp_path, monkeypatch):
    """The importance call writes nothing, so it starts with the filing step, before the wait for the checkpoint
    and the access marks; `remember` then finds the ratings ready (one call a round, not two)."""
    order: list[str] = []
    rate, touch = ModelImportance.rate, Remembrance.touch

    def rating(self, events):
        order.append("rate")
        return rate(self, events)

    def touching(self, *args, **kwargs):
        order.append("touch")
        return touch(self, *args, **kwargs)

    monkeypatch.setattr(ModelImportance, "rate", rating)
    monkeypatch.setattr(Remembrance, "touch", touching)
    run = tmp_path / "run"
    config = RunConfig(
        scenario=_scenario(tmp_path, write_behind=True),
        cycles=1,
        rounds=4,
        seed=3,
        model="scripted:latency=0.05",
        out=run,
    )
    asyncio.run(Simulation(config).run())
    steps = "".join("r" if step == "rate" else "t" for step in order)
    assert steps.count("t") >= 3 and steps.count("rtr") == steps.count("t"), steps  # ahead, touch, in remember
    summary = json.loads((run / "summary.json").read_text())
    assert summary["models"]["importance"]["calls"] == steps.count("t")
