"""Benchmark the data engine: samples per second from the Scepter, end to end, and where the wall time goes.

    .venv/bin/python benchmarks/data_engine.py --json     # one JSON object on stdout
    .venv/bin/python benchmarks/data_engine.py            # a readable summary

Each configuration is one full Scepter run on the local engine (`--societies 1`, then 8) in a temp dir: the offline
Path policy, real memory (an embedded Chroma directory per society, the real sentence-transformers embedder, loaded
and warmed up before timing), SQLite checkpoints, sample shards, the checked merge into RUN/samples/ and the summary.
samples_per_s is samples written over that wall time.

wall_share splits the wall time of a run three ways with a clock that follows what is in flight: while decisions
(`policy.adecide`) and memory calls (recall, remember, touch, reflect, carry_over; embedding included) are running,
their time is split evenly between those two; while neither is, it goes to `graph` (LangGraph, state, checkpoints,
sample writes, progress, merge: the graph and its bookkeeping). The three add up to 1. With one society the phases
never overlap, so the split is exact; the headline `wall_share` is that run's. With eight, one society's graph work
overlaps another's memory call, so `graph` there is the wall time in which only graph work was going on.

hours_to_33550336 is 33,550,336 samples at the best measured rate on this machine. The JSON also goes to
benchmarks/results/data_engine.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import environment, publish, results_options, whole_numbers

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.scepter import Scepter, ScepterConfig
from amphoreus_graph.society.config import RunConfig

RESULTS = Path(__file__).resolve().parent / "results" / "data_engine.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb", "sentence-transformers", "torch", "pydantic")
TARGET_SAMPLES = 33_550_336
SHARES = ("policy", "memory", "graph")


class ShareClock:
    """Attributes every instant of wall time to what is in flight (policy and memory evenly, else graph)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(SHARES, 0.0)
        self.calls: Counter[str] = Counter()
        self._active: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._last = time.perf_counter()

    def _flush(self, now: float) -> None:
        elapsed, self._last = now - self._last, now
        busy = [kind for kind in ("policy", "memory") if self._active[kind] > 0]
        for kind in busy or ["graph"]:
            self.seconds[kind] += elapsed / max(len(busy), 1)

    def enter(self, kind: str) -> None:
        with self._lock:
            self._flush(time.perf_counter())
            self._active[kind] += 1
            self.calls[kind] += 1

    def exit(self, kind: str) -> None:
        with self._lock:
            self._flush(time.perf_counter())
            self._active[kind] -= 1

    def restart(self) -> None:
        with self._lock:
            self.seconds = dict.fromkeys(SHARES, 0.0)
            self.calls.clear()
            self._last = time.perf_counter()

    def shares(self) -> dict[str, float]:
        with self._lock:
            self._flush(time.perf_counter())
            total = sum(self.seconds.values()) or 1.0
            return {kind: round(self.seconds[kind] / total, 4) for kind in SHARES}


class TimedPolicy:
    def __init__(self, inner: Any, clock: ShareClock) -> None:
        self._inner, self._clock, self.name = inner, clock, inner.name

    async def adecide(self, turn: Any) -> Any:
        self._clock.enter("policy")
        try:
            return await self._inner.adecide(turn)
        finally:
            self._clock.exit("policy")


class TimedMemory:
    """Times each Memory call (they run in worker threads, embedding included)."""

    def __init__(self, inner: Any, clock: ShareClock) -> None:
        self._inner, self._clock = inner, clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _timed(self, fn: Any, *args: Any) -> Any:
        self._clock.enter("memory")
        try:
            return fn(*args)
        finally:
            self._clock.exit("memory")

    def remember(self, events: Any) -> Any:
        return self._timed(self._inner.remember, events)

    def recall(self, queries: Any, k: int, now: Any, pending: Any = ()) -> Any:
        return self._timed(self._inner.recall, queries, k, now, pending)

    def touch(self, used: Any, now: Any) -> Any:
        return self._timed(self._inner.touch, used, now)

    def reflect(self, agents: Any, now: Any) -> Any:
        return self._timed(self._inner.reflect, agents, now)

    def carry_over(self, retention: Any, next_cycle: int) -> Any:
        return self._timed(self._inner.carry_over, retention, next_cycle)


class Timing:
    """The Scepter instrument: every society's policy and memory on one clock."""

    def __init__(self, clock: ShareClock) -> None:
        self.clock = clock

    def policy(self, society: str, policy: Any) -> Any:
        return TimedPolicy(policy, self.clock)

    def memory(self, society: str, memory: Any) -> Any:
        return TimedMemory(memory, self.clock)


def rss_mb() -> float:
    """Resident memory now (the peak is ru_maxrss)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def one_run(societies: int, args: argparse.Namespace, rounds: int) -> dict[str, Any]:
    """One full Scepter run in a fresh temp dir: wall time, samples and the wall-time split."""
    clock = ShareClock()
    with tempfile.TemporaryDirectory(prefix="amphoreus-data-engine-") as tmp:
        plan = ScepterConfig(
            societies=societies,
            scenarios=[args.scenario],
            template=RunConfig(
                scenario=args.scenario, cycles=args.cycles, rounds=rounds, seed=args.seed, out=Path(tmp) / "bench"
            ),
            parallel=max(societies, 1),
        )
        scepter = Scepter(plan, instrument=Timing(clock))
        cpu_before = os.times()
        clock.restart()
        started = time.perf_counter()
        summary = await scepter.run()
        wall = time.perf_counter() - started
        cpu_after = os.times()
    cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    samples = summary.samples_written
    return {
        "societies": societies,
        "samples": samples,
        "wall_s": round(wall, 3),
        "samples_per_s": round(samples / wall, 2),
        "wall_share": clock.shares(),
        "seconds": {k: round(v, 3) for k, v in clock.seconds.items()},
        "calls": dict(clock.calls),
        "cpu_utilisation": round(cpu / wall / (os.cpu_count() or 1), 3),
        "rss_mb_after": round(rss_mb(), 1),
    }


async def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    scenario = scenario_of(args.scenario)
    rounds = args.rounds or scenario.rounds_per_cycle
    load_before = os.getloadavg()
    started = time.perf_counter()
    default_embedder(RunConfig().embedder).encode(["warm"])
    embedder_load_s = time.perf_counter() - started
    started = time.perf_counter()
    await one_run(1, args, min(rounds, 2))  # first-call costs: graph compile, SQLite, Chroma, torch shapes
    warmup_s = time.perf_counter() - started

    runs: dict[str, dict[str, Any]] = {}
    for n in args.societies:
        repeats = [await one_run(n, args, rounds) for _ in range(args.repeats)]
        runs[str(n)] = sorted(repeats, key=lambda r: r["samples_per_s"])[len(repeats) // 2]  # the median run
    best = max(r["samples_per_s"] for r in runs.values())
    headline = runs[str(min(args.societies))]
    return {
        "benchmark": "data_engine",
        "samples_per_s": {n: r["samples_per_s"] for n, r in runs.items()},
        "wall_share": headline["wall_share"],
        "wall_share_by_societies": {n: r["wall_share"] for n, r in runs.items()},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "hours_to_33550336": round(TARGET_SAMPLES / best / 3600, 1),
        "settings": {
            "engine": "local",
            "scenario": args.scenario,
            "world": scenario.name,
            "agents": len(scenario.agents),
            "cycles": args.cycles,
            "rounds": rounds,
            "seed": args.seed,
            "repeats": args.repeats,
            "statistic": "median of repeats by samples/s (one untimed warm-up run first)",
            "policy": "offline (OfflinePathPolicy)",
            "memory": "Remembrance on an embedded PersistentClient per society (temp dir), real embedder",
            "wall_share_headline": f"the {min(args.societies)}-society run (phases do not overlap there)",
        },
        "runs": runs,
        "warmup": {"embedder_load_and_warm_s": round(embedder_load_s, 3), "warmup_run_s": round(warmup_s, 3)},
        "environment": environment(PACKAGES, load_before),
    }


def table(report: dict[str, Any]) -> str:
    s = report["settings"]
    lines = [
        f"data engine benchmark: local Scepter, scenario={s['scenario']} ({s['agents']} agents) cycles={s['cycles']} "
        f"rounds={s['rounds']}, offline policy, real memory",
        "",
    ]
    for n, run in report["runs"].items():
        share = " ".join(f"{k} {v:.1%}" for k, v in run["wall_share"].items())
        lines.append(
            f"  {n:>2} societies: {run['samples_per_s']:>7.1f} samples/s ({run['samples']} in {run['wall_s']} s)  "
            f"{share}  cpu {run['cpu_utilisation']:.0%}  rss {run['rss_mb_after']} MB"
        )
    lines += [
        "",
        f"  peak RSS {report['peak_rss_mb']} MB; 33,550,336 samples would take {report['hours_to_33550336']} h here",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--scenario", default="amphoreus")
    parser.add_argument("--cycles", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=12, help="rounds per cycle (0: the scenario's)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--societies", type=whole_numbers, default="1,8", help="comma-separated society counts to measure"
    )
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per count (median reported)")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if min(args.societies) < 1 or args.repeats < 1 or args.cycles < 1 or args.rounds < 0:
        parser.error("--societies, --repeats and --cycles must be at least 1, --rounds at least 0")
    report = asyncio.run(benchmark(args))
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
