"""Forking a run: a new run directory that shares its parent's history up to a round, then goes its own way (another
seed, another model, a variant of its scenario), the parent untouched.

The branch is rebuilt, not copied: the fork replays its parent from the start to the fork point in its own
directory (checkpoints, samples, chronicle, memory store), answering every model request from a copy of the
parent's response cache, and then checks the replayed samples against the parent's byte for byte. Replay, because
the memory store keeps no history: what it held at the fork point (retention, reflections, access times) exists
only by filing the same rounds again. The fork keeps its parent's name as its identity (the draws a run makes come
from its name and seed), so with the same settings it goes on exactly as the parent did; its samples carry that
name. A changed seed or scenario is written into the checkpoint the branch resumes from (LangGraph's `update_state`),
and the memory store is claimed again under the branch's settings. The branch's memory is always its own store in
its directory, also when the parent's lived on a Chroma server.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import aiosqlite
from pydantic import BaseModel

from amphoreus_graph.atomic import write_json
from amphoreus_graph.catalogs.scenario import Scenario, scenario_of
from amphoreus_graph.errors import AmphoreusError, RunStopped, stored_model
from amphoreus_graph.layout import SHARD_GLOB, RunDir
from amphoreus_graph.memory.ownership import StoreOwner, write_owner
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.society.checkpointer import RunCheckpointer
from amphoreus_graph.society.chronicle import iter_chronicle
from amphoreus_graph.society.config import RunConfig, stored_config
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.recurrence import build_recurrence_graph
from amphoreus_graph.society.run_dir import prepare_run_dir
from amphoreus_graph.society.runner import Simulation, open_society_memory
from amphoreus_graph.society.summary import stored_summary
from amphoreus_graph.society.variant import checked_variant, save_variant

# What a branch may change: who decides and how it is asked, and the seed of what follows. The world, its rounds,
# the embedder and where memory lives shape what was already filed, so they stay the parent's.
BRANCHABLE = frozenset(
    {
        "seed",
        "model",
        "base_url",
        "models",
        "temperature",
        "timeout_s",
        "max_retries",
        "structured",
        "transport",
        "max_concurrency",
    }
)


def parse_fork_point(text: str) -> tuple[int, int]:
    """`CYCLE/ROUND` (e.g. 2/3): the last round the fork shares with its parent."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if found is None or int(found.group(1)) < 1 or int(found.group(2)) < 1:
        raise AmphoreusError(f"--at {text!r}: expected CYCLE/ROUND, e.g. 2/3 (both from 1)")
    return int(found.group(1)), int(found.group(2))


class ForkPlan(BaseModel):
    """A fork that can be faithful (`plan_fork` checked it): the parent, its config, the fork point, where the branch
    goes, the changes to its settings and to its scenario (a variant's overrides, checked). Saved as NEW/fork.json
    while the replay runs, so a fork stopped on the way can be finished (`resume_fork`)."""

    parent: Path
    origin: RunConfig
    at: tuple[int, int]
    out: Path
    changes: dict[str, Any]
    overrides: dict[str, Any]


async def fork(plan: ForkPlan, *, api_key: str | None = None, limits: dict[str, Any] | None = None) -> Simulation:
    """Replay the plan's parent into its `out` up to the fork point, check the replay, apply the plan's changes and
    `limits` (budgets for the branch); return the branch, ready to `stream(resume=True)`. `out` must hold no run."""
    out = plan.out
    prepare_run_dir(out, resume=False)  # before the cache is copied in: a run already there stays untouched
    files = RunDir(out)
    if (cache := plan.origin.cache_file()) is not None and cache.is_file():
        shutil.copyfile(cache, files.cache)  # the parent's answers, so the replay asks the model nothing new
    write_json(files.fork_plan, json.loads(plan.model_dump_json()))
    await _replay(Simulation(_replay_config(plan), api_key=api_key))
    return await _branch_off(plan, api_key=api_key, limits=limits)


async def resume_fork(out: Path, *, api_key: str | None = None, limits: dict[str, Any] | None = None) -> Simulation:
    """A fork stopped before its branch was set up (killed or cancelled during the replay) goes on: the replay to
    its fork point, then the branch as planned; returns it, ready to `stream(resume=True)`."""
    files = RunDir(out)
    plan = stored_model(ForkPlan, files.fork_plan, "`amphoreus simulate --fork`").model_copy(update={"out": out})
    if not files.config.is_file():  # stopped before the replay wrote anything: start it again
        await _replay(Simulation(_replay_config(plan), api_key=api_key))
    elif stored_config(out).limits.stop_after == plan.at:  # the replay's own config: it goes on to the fork point
        restart = not files.checkpoint.is_file()  # stopped before its first checkpoint: from the beginning
        await _replay(Simulation.resume(out, api_key=api_key, fresh_memory=restart), resume=True)
    else:  # the branch was set up; only the plan was left behind
        files.fork_plan.unlink()
        return Simulation.resume(out, api_key=api_key, limits=limits)
    return await _branch_off(plan, api_key=api_key, limits=limits)


async def _replay(sim: Simulation, *, resume: bool = False) -> None:
    """Run a replay on: it stops after the fork point, as asked (what it wrote is checked next)."""
    with contextlib.suppress(RunStopped):
        await sim.run(resume=resume)


def _replay_config(plan: ForkPlan) -> RunConfig:
    """The parent's config, replaying into `out` under the parent's name and stopping after the fork point."""
    return plan.origin.model_copy(
        update={
            "out": plan.out,
            "name": plan.origin.run_id,
            # the branch's memory is its own, embedded in `out`: on the parent's Chroma server it would be the
            # parent's society (the fork keeps its name); a replay into a store of its own is checked as any other
            "memory_dir": None,
            "chroma_url": None,
            "memory": None,
            "cache_dir": None,
            "cache": True,
            "run_token": "",
            # no budget or breaker: the replay asks nothing new, and is checked against the parent instead
            "limits": Limits(stop_after=plan.at, max_fallback_rate=1.0),
        }
    )


async def _branch_off(plan: ForkPlan, *, api_key: str | None, limits: dict[str, Any] | None) -> Simulation:
    """Check the replay, then turn it into the branch: changes, variant, seed and scenario in the checkpoint, the
    store claimed again, the branch's config saved (the plan is removed after: until then, this can run again)."""
    parent, origin, at, out = plan.parent, plan.origin, plan.at, plan.out
    _check_replay(parent, out, at)
    replayed = stored_config(out)
    branch = replayed.model_copy(update={**plan.changes, "limits": origin.limits})
    if plan.overrides:
        branch.scenario = save_variant(origin.scenario, plan.overrides, out)
    if plan.changes or plan.overrides:  # it goes another way: its own rounds get ids of their own
        await _rebase(RunDir(out).checkpoint, branch, out.name)
        branch.forked_from = f"{at[0]}/{at[1]}@{parent.resolve()}"
    if branch.fingerprint() != replayed.fingerprint():
        _reclaim(branch)
    branch.save()
    RunDir(out).fork_plan.unlink(missing_ok=True)
    return Simulation.resume(out, api_key=api_key, limits=limits)


def plan_fork(
    parent: Path,
    at: tuple[int, int],
    out: Path,
    changes: dict[str, Any] | None = None,
    *,
    overrides: dict[str, Any] | None = None,
) -> ForkPlan:
    """A fork of `parent` after round `at` (cycle, round) into `out`, with `changes` (RunConfig fields of BRANCHABLE)
    and scenario `overrides` (a variant of the parent's scenario for what follows: the same agents), if it can be
    faithful; else one line saying why."""
    origin = stored_config(parent)
    if origin.forked_from is not None:
        raise AmphoreusError(
            f"--fork {parent}: it is a fork that went its own way at {origin.forked_from}, and its rounds up to there "
            "were lived under that run's settings, so they cannot be replayed from its own; expected a run that is "
            "not such a fork (fork the run it came from instead)"
        )
    changes = dict(changes or {})
    if unknown := sorted(set(changes) - BRANCHABLE):
        raise AmphoreusError(f"--fork: {', '.join(unknown)} cannot change on a branch; expected only {_listed()}")
    if overrides:
        _check_same_agents(scenario_of(origin.scenario), checked_variant(origin.scenario, overrides, out))
    played = {(r.cycle, r.round) for r in iter_chronicle(parent)}
    if at not in played:
        last = max(played, default=(0, 0))
        raise AmphoreusError(
            f"--at {at[0]}/{at[1]}: {parent} never played that round (its last is {last[0]}/{last[1]}); "
            "expected a round of its chronicle"
        )
    asked = stored_summary(parent).model_calls if RunDir(parent).summary.is_file() else 0
    cache = origin.cache_file()
    if asked and (cache is None or not cache.is_file()):
        raise AmphoreusError(
            f"--fork {parent}: it asked a model {asked} times and kept no response cache, so its rounds cannot be "
            "replayed as they were; expected a run with its cache"
        )
    return ForkPlan(parent=parent, origin=origin, at=at, out=out, changes=changes, overrides=dict(overrides or {}))


def _listed() -> str:
    return ", ".join(sorted(BRANCHABLE))


def _check_replay(parent: Path, out: Path, at: tuple[int, int]) -> None:
    """The replayed samples are the parent's up to the fork point, byte for byte; else the fork is refused."""
    theirs, ours = RunDir(parent).samples, RunDir(out).samples
    for shard in sorted(theirs.glob(SHARD_GLOB)):
        expected = [line for line in shard.read_bytes().splitlines(keepends=True) if _position(line) <= at]
        mine = ours / shard.name
        got = mine.read_bytes().splitlines(keepends=True) if mine.is_file() else []
        if got != expected:
            raise AmphoreusError(
                f"{mine}: the replay of {parent} differs from it before the fork point (a model answer not in its "
                f"cache, or a change in this version); expected the same samples. {out} is left for inspection"
            )


def _position(line: bytes) -> tuple[int, int]:
    row = json.loads(line)
    return int(row["cycle"]), int(row["round"])


def _check_same_agents(parent: Scenario, variant: Scenario) -> None:
    """A branch's agents are its parent's: their memories and samples go on under the same names."""
    if variant.agent_names != parent.agent_names:
        raise AmphoreusError(
            f"--scenario-overrides: the variant's agents are {variant.agent_names}; expected the parent's, in its "
            f"order ({parent.agent_names}): a branch goes on with the society that lived up to the fork point"
        )


async def _rebase(checkpoint: Path, branch: RunConfig, label: str) -> None:
    """Write the branch's seed, scenario and label into the checkpoint it resumes from: the draws from the fork
    point on are its own, so are the world's rules, and its samples' ids name it. A variant that cannot take up the
    world where it stands is refused."""
    thread = {"configurable": {"thread_id": branch.run_id}}
    async with aiosqlite.connect(str(checkpoint)) as conn:
        saver = RunCheckpointer(conn, checkpoint)
        graph = build_recurrence_graph().compile(checkpointer=saver)
        state = (await graph.aget_state(thread)).values  # type: ignore[arg-type]
        _check_takes_up(scenario_of(branch.scenario), state["world"], checkpoint.parent)
        # as the cycle's opening node: what runs next is unchanged (the director opens the next round)
        update = {"seed": branch.seed, "scenario": branch.scenario, "branch": label}
        await graph.aupdate_state(thread, update, as_node="genesis")  # type: ignore[arg-type]


def _check_takes_up(variant: Scenario, world: dict[str, Any], out: Path) -> None:
    """The variant's world can read the fork point's state: show it, list who acts, and perceive for each of them."""
    try:
        variant.world.view(world)
        for agent in variant.world.actors(world):
            variant.world.perceive(world, agent)
    except Exception as exc:  # a world's own code, on a state another version of it wrote: any fault is a refusal
        raise AmphoreusError(
            f"--scenario-overrides: the variant cannot take up the world at the fork point ({type(exc).__name__}: "
            f"{exc}); expected changes the world's state still fits. {out} holds the replay up to the fork point"
        ) from None


def _reclaim(branch: RunConfig) -> None:
    """The fork's own store, claimed again with the branch's settings (its fingerprint holds the seed)."""
    memory = open_society_memory(branch, OfflinePathPolicy())  # only its claim is written
    try:
        write_owner(
            memory.index,
            StoreOwner(token=branch.run_token, run_dir=str(branch.out), fingerprint=branch.fingerprint()),
        )
    finally:
        memory.close()
