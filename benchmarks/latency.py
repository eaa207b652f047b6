"""Speed at the limit: how much of a round is the model's latency, this project beside raw LangGraph.

The workload (issue 17): 12 agents, R rounds; each agent makes one model call per round that takes L seconds (the
scripted stand-in model through the real model gateway, `scripted:latency=L`); recall top-5; the round's events
written to the agents' memories. The world is `amphoreus` with one change (a variant, `ENDLESS`): the Black Tide
does not end the cycle, so all R rounds are played (the tide ended it after ~5, leaving ~3 steady rounds a run).
Variants, each in a fresh interpreter, repeated alternately:

- `raw_langgraph`: a StateGraph of async nodes (Send to 12 agent nodes that each sleep L, one node that gathers
  them), compiled with `AsyncSqliteSaver`: the floor any LangGraph program pays.
- `raw_run_checkpointer`: the same graph compiled with this project's checkpointer (`society/checkpointer.py`,
  which commits the writes waiting together): the floor with the checkpoint writing this project does, so that
  `framework` ÷ it is the engine's own cost per step, the checkpointer's gain left out.
- `framework`: this project's society graph with `NullMemory` and a policy that, like raw LangGraph's agents,
  sleeps L and then decides as the offline policy does (no prompt, no model client): the engine alone.
- `null_memory`: this project's society graph (run directory, samples, chronicle, SQLite checkpoints) with the
  model deciding and `NullMemory`: the engine and the gateway on their own.
- `real_memory`: the same with the run's real Chroma memory and the offline importance rater (the model decides,
  memory rates offline).
- `model_importance`: as shipped with a chat model: the model also rates importance and reflects.

A round's wall is the time between two `round_done` events (every node of the round, memory included). At L > 0
the figure is the median over the steady rounds (the first left out), then over repeats, shown ÷ L (how many model
latencies a round takes). At L = 0 it is the sustained round: from the first round's end to the run's return, every
checkpoint written, ÷ (R - 1), shown per agent step (÷ 12). LangGraph writes checkpoints behind the steps, and at
L = 0 raw LangGraph's fall behind its rounds (~7 ms a round on this machine, all written as the graph returns), so
the time between its round ends is not what a round costs; a median of those walls is printed beside it. Figures
depend on the machine's load: the JSON records it. The JSON goes to benchmarks/results/latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Send  # noqa: E402

from benchmarks.bench_common import environment, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "latency.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb", "onnxruntime")
AGENTS = 12
ENDLESS = {"end_conditions": {"black_tide": False}}  # the default world, every round of R played
# the floors an L = 0 figure is set beside (`times_<floor>` in the JSON), and how the table names them
FLOORS = {"raw_langgraph": "raw LangGraph", "raw_run_checkpointer": "raw on this checkpointer"}
VARIANTS = ("raw_langgraph", "raw_run_checkpointer", "framework", "null_memory", "real_memory", "model_importance")


# --- raw LangGraph --------------------------------------------------------------------------------------------


class _RawState(TypedDict, total=False):
    round: int
    decisions: Annotated[list[str], operator.add]


def raw_langgraph(latency_s: float, rounds: int, *, run_checkpointer: bool = False) -> tuple[list[float], float]:
    """Round ends of the plain-LangGraph floor (fan out to 12 async sleeping agents, gather, loop), and when the
    graph returned, every checkpoint written; on LangGraph's SQLite saver or this project's."""
    marks: list[float] = []

    def director(state: _RawState) -> dict[str, Any]:
        return {"round": state.get("round", 0) + 1}

    def fan_out(state: _RawState) -> list[Send]:
        return [Send("agent", {"agent": i, "round": state["round"]}) for i in range(AGENTS)]

    async def agent(payload: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(latency_s)
        return {"decisions": [f"{payload['round']}:{payload['agent']}"]}

    def gather(state: _RawState) -> dict[str, Any]:
        marks.append(time.perf_counter())
        return {}

    builder = StateGraph(_RawState)
    builder.add_node("director", director)
    builder.add_node("agent", agent)  # type: ignore[arg-type]
    builder.add_node("gather", gather)
    builder.add_edge(START, "director")
    builder.add_conditional_edges("director", fan_out, ["agent"])
    builder.add_edge("agent", "gather")
    builder.add_conditional_edges("gather", lambda s: END if s["round"] >= rounds else "director", ["director", END])

    async def run(path: str) -> None:
        from amphoreus_graph.society.checkpointer import checkpointer

        saving = checkpointer(Path(path)) if run_checkpointer else AsyncSqliteSaver.from_conn_string(path)
        async with saving as saver:
            graph = builder.compile(checkpointer=saver)
            config: Any = {"configurable": {"thread_id": "raw"}, "recursion_limit": 10_000}
            await graph.ainvoke({"round": 0}, config)

    with tempfile.TemporaryDirectory(prefix="amphoreus-latency-") as tmp:
        asyncio.run(run(str(Path(tmp) / "checkpoints.sqlite")))
        return marks, time.perf_counter()


# --- this project ---------------------------------------------------------------------------------------------


class _SleepThenOffline:
    """Sleeps L, then decides as the offline policy does (microseconds of Python): a model call with no model."""

    name = "sleep"

    def __init__(self, latency_s: float) -> None:
        from amphoreus_graph.policy.registry import resolve_model

        self.latency_s = latency_s
        self._offline = resolve_model("offline")

    async def adecide(self, turn: Any) -> Any:
        await asyncio.sleep(self.latency_s)
        return await self._offline.adecide(turn)


class _DecideOnly:
    """The model's policy, seen by the run as a plain policy: memory then rates offline (no chat caller to ask)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name = inner.name

    async def adecide(self, turn: Any) -> Any:
        return await self._inner.adecide(turn)


def society(variant: str, latency_s: float, rounds: int) -> tuple[list[float], float]:
    """Round ends of a 12-agent society whose agents decide by the scripted model through the gateway, and when
    the run returned, every checkpoint written."""
    from amphoreus_graph.catalogs.scenario_files import variant_of, write_variant
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society.runner import RunConfig, Simulation

    model = f"scripted:latency={latency_s}"
    with tempfile.TemporaryDirectory(prefix="amphoreus-latency-") as tmp:
        scenario = Path(tmp) / "endless.yaml"
        write_variant(scenario, variant_of("amphoreus", ENDLESS))
        config = RunConfig(scenario=str(scenario), cycles=1, rounds=rounds, model=model, out=Path(tmp) / "run")
        policy = resolve_model(model)
        if variant == "framework":
            sim = Simulation(config, policy=_SleepThenOffline(latency_s), memory=NullMemory())
        elif variant == "null_memory":
            sim = Simulation(config, policy=policy, memory=NullMemory())
        elif variant == "real_memory":
            sim = Simulation(config, policy=_DecideOnly(policy))
        else:
            sim = Simulation(config, policy=policy)
        marks: list[float] = []

        async def run() -> None:
            async for event in sim.stream():
                if event.type == "round_done":
                    marks.append(time.perf_counter())

        asyncio.run(run())
        return marks, time.perf_counter()


def measure(variant: str, latency_s: float, rounds: int) -> dict[str, Any]:
    """One variant's round walls, in this process: the median of the steady rounds, and the sustained round (from
    the first round's end to the run's return, every checkpoint written, per round)."""
    if variant.startswith("raw_"):
        ends, finished = raw_langgraph(latency_s, rounds, run_checkpointer=variant == "raw_run_checkpointer")
    else:
        ends, finished = society(variant, latency_s, rounds)
    walls = [b - a for a, b in itertools.pairwise(ends)]
    return {
        "round_wall_s": statistics.median(walls[1:] or walls),
        "mean_wall_s": statistics.fmean(walls),
        "sustained_round_s": (finished - ends[0]) / max(1, len(ends) - 1),
    }


def in_a_fresh_process(variant: str, latency_s: float, rounds: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--variant", variant, "--latency", str(latency_s), "--rounds", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchmarks/latency.py {variant}: failed\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# --- the report -------------------------------------------------------------------------------------------------


def at_latency(latency_s: float, rounds: int, repeats: int, variants: list[str]) -> dict[str, Any]:
    """Each variant's figures over alternating repeats (medians), with the ratio that matters at this latency: at
    L > 0 the steady round ÷ L; at L = 0 the sustained round per agent step, beside raw LangGraph's."""
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for _ in range(repeats):
        for variant in variants:
            runs[variant].append(in_a_fresh_process(variant, latency_s, rounds))
    rows: dict[str, Any] = {}
    for variant, measured in runs.items():
        wall = statistics.median(m["round_wall_s"] for m in measured)
        sustained = statistics.median(m["sustained_round_s"] for m in measured)
        row: dict[str, Any] = {
            "round_wall_s": round(wall, 4),
            "sustained_round_s": round(sustained, 4),
            "repeats": [{k: round(v, 4) for k, v in m.items()} for m in measured],
        }
        if latency_s > 0:
            row["ratio"] = round(wall / latency_s, 3)
            row["sustained_ratio"] = round(sustained / latency_s, 3)
        else:
            row["ms_per_agent_step"] = round(1000 * sustained / AGENTS, 3)
            row["median_round_ms_per_agent_step"] = round(1000 * wall / AGENTS, 3)
        rows[variant] = row
    for floor_variant in FLOORS:
        if latency_s == 0 and floor_variant in rows:
            floor = rows[floor_variant]["sustained_round_s"]
            for row in rows.values():
                row[f"times_{floor_variant}"] = round(row["sustained_round_s"] / floor, 2)
    return rows


def table(report: dict[str, Any]) -> str:
    lines = [f"{AGENTS} agents, {report['rounds']} rounds, medians of {report['repeats']}"]
    for latency, rows in report["latencies"].items():
        lines.append(f"  L = {latency} s")
        for variant, row in rows.items():
            if "ratio" in row:
                lines.append(f"    {variant:<20} round ÷ L {row['ratio']:>7.3f}   ({row['round_wall_s']:.3f} s)")
            else:
                times = [f"{row[f'times_{key}']}× {name}" for key, name in FLOORS.items() if f"times_{key}" in row]
                over = f"  ({', '.join(times)})" if times else ""
                lines.append(
                    f"    {variant:<20} {row['ms_per_agent_step']:>8.3f} ms per agent step sustained{over}; "
                    f"median round {row['median_round_ms_per_agent_step']:.3f}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.5, 0.0], help="model latencies L, seconds")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one measurement, in this process
    parser.add_argument("--latency", type=float, default=0.5, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(measure(args.variant, args.latency, args.rounds)))
        return 0
    load_before = os.getloadavg()
    report: dict[str, Any] = {"rounds": args.rounds, "repeats": args.repeats, "latencies": {}}
    for latency in args.latencies:
        report["latencies"][str(latency)] = at_latency(latency, args.rounds, args.repeats, args.variants)
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
