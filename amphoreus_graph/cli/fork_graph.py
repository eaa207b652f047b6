"""The fork graph: `simulate --fork` from Studio. Pick a run (a CLI run, a library run, or a society or recurrence
thread's `runs/<thread id>`) and one of its rounds (a thread's history shows each checkpoint's `world.cycle` and
`world.round`); the branch replays the run up to it, then goes on with another seed, model or scenario variant.

A Studio checkpoint cannot be forked in place: the run's memory store has lived past it, so only a replay gives the
branch the memories its agents had at that round (society/fork.py says why). The branch is a run of its own, so it
runs as one: `amphoreus simulate --fork … --events` in a child process, whose JSON-lines events this graph relays
(so it lives beside the CLI it drives).
Its own checkpoints stay its own (not a subgraph's), its file work never blocks the server's event loop, and a
cancelled run kills it; submitted again with the same `out_dir` (or `simulate --resume OUT`), what it left is
finished as it was planned (the replay, then the branch).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from amphoreus_graph.contracts.bounds import Seed
from amphoreus_graph.errors import AmphoreusError, graph_input
from amphoreus_graph.layout import RunDir
from amphoreus_graph.society.run_dir import newest_run
from amphoreus_graph.society.services import SocietySettings


class ForkInput(BaseModel):
    """Branch off a run after one of its rounds: the same past, then its own way."""

    run_dir: str = Field(
        default="",
        description="the run to branch off: a directory with its config.json (`amphoreus simulate`'s, or a Studio "
        "thread's runs/<thread id>); default: the newest run in AMPHOREUS_RUNS_DIR (runs/)",
    )
    at: str = Field(default="1/1", description="CYCLE/ROUND: the last round the branch shares with the run")
    out_dir: str = Field(default="", description="the branch's directory; default: RUNS/<run>-fork-C-R-<time>")
    seed: Seed | None = Field(default=None, description="another seed from the fork point on (default: the run's)")
    model: str | None = Field(default=None, description="another model from the fork point on (default: the run's)")
    scenario_overrides: dict[str, Any] = Field(
        default={},
        description="how the world differs from the fork point on: merged onto the run's scenario (mappings key by "
        "key, null removes a key)",
    )


class ForkState(TypedDict, total=False):
    run_dir: str
    at: str
    out_dir: str
    seed: int | None
    model: str | None
    scenario_overrides: dict[str, Any]
    summary: dict[str, Any]


async def branch(state: ForkState) -> dict[str, Any]:
    """Replay the run up to the fork point into the branch's directory, then run the branch to its end (an out_dir
    holding a fork stopped on the way: finish it); the `forked` event and the branch's own events are this graph's."""
    request = graph_input(ForkInput, state, "fork input")
    out = Path(request.out_dir) if request.out_dir else None
    if out is not None and await asyncio.to_thread(RunDir(out).fork_plan.is_file):
        # a fork stopped on the way (cancelled, killed): finished as it was planned
        summary = await _relay(_cli("simulate", "--resume", str(out), "--events"), get_stream_writer())
        return {"out_dir": str(out), "summary": summary}
    runs = Path(SocietySettings().runs_dir)
    parent = Path(request.run_dir) if request.run_dir else await asyncio.to_thread(newest_run, runs)
    if out is None:
        out = runs / f"{parent.name}-fork-{request.at.replace('/', '-')}-{time.strftime('%Y%m%d-%H%M%S')}"
    command = ["simulate", "--fork", str(parent), "--at", request.at, "--out", str(out), "--events"]
    for option, value in (("--seed", request.seed), ("--model", request.model)):
        if value is not None:
            command += [option, str(value)]
    if request.scenario_overrides:
        command += ["--scenario-overrides", json.dumps(request.scenario_overrides)]
    summary = await _relay(_cli(*command), get_stream_writer())
    return {"run_dir": str(parent), "out_dir": str(out), "summary": summary}


def _cli(*args: str) -> list[str]:
    """`amphoreus ARGS` as this interpreter runs it."""
    return [sys.executable, "-m", "amphoreus_graph.cli", *args]


async def _relay(command: list[str], write: Any) -> dict[str, Any]:
    """Run the CLI, relaying each event it prints; its error line becomes this step's error. Returns the summary."""
    child = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None and child.stderr is not None
    errors = asyncio.ensure_future(child.stderr.read())
    summary: dict[str, Any] = {}
    try:
        async for line in child.stdout:
            event = json.loads(line)
            write(event)
            if event.get("type") == "done":
                summary = event["summary"]
        code = await child.wait()
    finally:
        if child.returncode is None:  # the run was cancelled: so is the fork
            child.kill()
            await child.wait()
    said = (await errors).decode(errors="replace").strip().splitlines()
    if code != 0:
        raise AmphoreusError(said[-1].removeprefix("error: ") if said else f"the fork stopped with exit code {code}")
    return summary


def build_fork_graph() -> StateGraph[Any, None, Any, Any]:
    builder = StateGraph(ForkState, input_schema=ForkInput)
    builder.add_node("branch", branch)
    builder.add_edge(START, "branch")
    builder.add_edge("branch", END)
    return builder
