"""Benchmark the society graph: how fast the offline run goes with real memory, and what the framework costs.

    .venv/bin/python benchmarks/society.py --json        # one JSON object on stdout
    .venv/bin/python benchmarks/society.py               # a readable table
    .venv/bin/python benchmarks/society.py --profile     # also cProfile the offline + real-memory run

Three configurations, each a full `Simulation` run (LangGraph, SQLite checkpoint, sample shards) in a temp dir:

- offline_real_memory: the offline Path policy with real memory (Remembrance over embedded Chroma,
  the real sentence-transformers embedder, loaded and warmed up before timing). Headline: turns_per_s_offline.
- scripted_null_memory: an instant fake chat model through LLMPolicy (`scripted:latency=0`) and NullMemory, i.e.
  what the framework itself costs per agent turn. Headline: overhead_ms_per_turn.
- offline_null_memory: the offline policy without memory (the memory's share is the difference to the first).

Each configuration gets one untimed warm-up run, then `--repeats` timed runs; the headline is the median. The
embedder's text cache is cleared before every run, so each one embeds like a fresh process would.

The breakdown comes from thin timing wrappers around the embedder, the memory, the policy, the sample writer and
the checkpointer (measured in the same runs; the wrappers cost microseconds). Embedding, Chroma and sample writes
run in worker threads while the graph waits for them, so they add up with the rest; checkpoint writes are awaited
in the background (LangGraph's default "async" durability) and overlap graph work, so they are shown apart.
The JSON also goes to benchmarks/results/society.json.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import environment, publish, results_options
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store import MemorySpec, NullMemory
from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.society.samples import ShardWriter
from amphoreus_graph.society.services import build_memory

RESULTS = Path(__file__).resolve().parent / "results" / "society.json"
PROFILE_FILE = RESULTS.with_name("society-offline-real-memory.prof")
CONFIGS = ("offline_real_memory", "scripted_null_memory", "offline_null_memory")


class Timer:
    """Seconds and calls per label; safe to add to from worker threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._open: dict[str, int] = defaultdict(int)
        self._since: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, label: str, seconds: float) -> None:
        with self._lock:
            self.seconds[label] += seconds
            self.calls[label] += 1

    def count(self, label: str, n: int) -> None:
        with self._lock:
            self.calls[label] += n

    def enter(self, label: str) -> None:
        """Start an overlapping span: `label` accrues wall time while at least one span is open (a union)."""
        with self._lock:
            self.calls[label] += 1
            self._open[label] += 1
            if self._open[label] == 1:
                self._since[label] = time.perf_counter()

    def exit(self, label: str) -> None:
        with self._lock:
            self._open[label] -= 1
            if self._open[label] == 0:
                self.seconds[label] += time.perf_counter() - self._since[label]

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(label, time.perf_counter() - started)


class ThreadProfiles:
    """cProfile for work done in worker threads (asyncio.to_thread): one profiler per call, merged later."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        profile = cProfile.Profile()
        profile.enable()
        try:
            return fn(*args)
        finally:
            profile.disable()
            with self._lock:
                self.profiles.append(profile)


class TimedEmbedder:
    """The real embedder, timed (Remembrance only calls `encode` and reads `dims`/`name`)."""

    def __init__(self, inner: Any, timer: Timer) -> None:
        self._inner = inner
        self._timer = timer
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def encode(self, texts: list[str]) -> Any:
        self._timer.count("texts_embedded", len(texts))
        self.texts.extend(texts)
        with self._timer.measure("embed"):
            return self._inner.encode(texts)

    def token_stats(self) -> dict[str, Any]:
        """How much text went through the model (counted after the run, outside the timing)."""
        model = getattr(self._inner, "_model", None)
        tokenizer = getattr(model, "tokenizer", None)
        if tokenizer is None or not self.texts:
            return {}
        limit = int(getattr(model, "max_seq_length", 0) or 0)
        lengths = [len(ids) for ids in tokenizer(self.texts, add_special_tokens=True, verbose=False)["input_ids"]]
        return {
            "texts": len(lengths),
            "tokens_mean": round(sum(lengths) / len(lengths), 1),
            "tokens_max": max(lengths),
            "max_seq_length": limit,
            "texts_truncated": sum(n > limit for n in lengths) if limit else None,
        }


class TimedMemory:
    """A Memory wrapper that times each call (embedding inside it is timed separately by TimedEmbedder)."""

    def __init__(self, inner: Any, timer: Timer, profiles: ThreadProfiles | None = None) -> None:
        self._inner = inner
        self._timer = timer
        self._profiles = profiles

    def _run(self, label: str, fn: Callable[..., Any], *args: Any) -> Any:
        with self._timer.measure(label):
            if self._profiles is not None:
                return self._profiles.call(fn, *args)
            return fn(*args)

    def remember(self, events: list[Any]) -> dict[str, float]:
        return self._run("memory.remember", self._inner.remember, events)  # type: ignore[no-any-return]

    def recall(self, queries: dict[str, str], k: int, now: Any, pending: Any = ()) -> Any:
        return self._run("memory.recall", self._inner.recall, queries, k, now, pending)

    def anticipate(self, texts: Callable[[], list[str]]) -> Any:
        return self._inner.anticipate(texts)  # background work: timed where it meets a recall, by the embedder

    def anticipate_recall(self, request: Callable[[], Any]) -> Any:
        return self._inner.anticipate_recall(request)  # background work: timed where the recall waits for it

    @property
    def stores(self) -> bool:
        return bool(self._inner.stores)

    def touch(self, used: Any, now: Any) -> None:
        self._run("memory.touch", self._inner.touch, used, now)

    def prepare(self, events: list[Any], reflecting: list[str], now: Any) -> None:
        self._inner.prepare(events, reflecting, now)  # background work: timed where the filing step claims it

    def settle(self) -> dict[str, Any]:
        return self._inner.settle()  # type: ignore[no-any-return]

    def reflect(self, agents: list[str], now: Any) -> Any:
        return self._run("memory.reflect", self._inner.reflect, agents, now)

    def carry_over(self, retention: dict[str, Any], next_cycle: int) -> dict[str, int]:
        return self._run("memory.carry_over", self._inner.carry_over, retention, next_cycle)


class TimedPolicy:
    """A Policy wrapper that sums the time spent inside `adecide` (for the offline policy: the decision itself)."""

    def __init__(self, inner: Any, timer: Timer) -> None:
        self._inner = inner
        self._timer = timer
        self.name = inner.name

    async def adecide(self, turn: Any) -> Any:
        self._timer.enter("policy.adecide")  # agents decide concurrently: wall time while any is deciding
        try:
            return await self._inner.adecide(turn)
        finally:
            self._timer.exit("policy.adecide")


@contextmanager
def patched(timer: Timer, profiles: ThreadProfiles | None) -> Iterator[None]:
    """Time the sample writer and the checkpointer in this process only (the package is left untouched)."""
    originals: list[tuple[type, str, Any]] = []

    def wrap_sync(cls: type, name: str, label: str) -> None:
        original = getattr(cls, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            with timer.measure(label):
                if profiles is not None:
                    return profiles.call(lambda: original(self, *args, **kwargs))
                return original(self, *args, **kwargs)

        originals.append((cls, name, original))
        setattr(cls, name, wrapper)

    def wrap_async(cls: type, name: str, label: str) -> None:
        original = getattr(cls, name)

        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            timer.enter(label)  # concurrent writes (one per agent turn) count once: wall time while any is open
            try:
                return await original(self, *args, **kwargs)
            finally:
                timer.exit(label)

        originals.append((cls, name, original))
        setattr(cls, name, wrapper)

    wrap_sync(ShardWriter, "write_round", "samples.write_round")
    wrap_async(AsyncSqliteSaver, "aput", "checkpoint.aput")
    wrap_async(AsyncSqliteSaver, "aput_writes", "checkpoint.aput_writes")
    wrap_async(AsyncSqliteSaver, "aget_tuple", "checkpoint.aget_tuple")
    try:
        yield
    finally:
        for cls, name, original in reversed(originals):
            setattr(cls, name, original)


def clear_text_cache(embedder: Any) -> None:
    cache = getattr(embedder, "_cache", None)
    if cache is not None:
        cache.clear()


async def one_run(
    kind: str, args: argparse.Namespace, rounds: int, profiles: ThreadProfiles | None = None
) -> dict[str, Any]:
    """One full Simulation run of a configuration in a fresh temp dir; wall time, turns and the breakdown."""
    timer = Timer()
    with tempfile.TemporaryDirectory(prefix="amphoreus-bench-") as tmp:
        config = RunConfig(
            scenario=args.scenario,
            cycles=args.cycles,
            rounds=rounds,
            seed=args.seed,
            out=Path(tmp) / "bench",
            max_concurrency=args.max_concurrency,
        )
        model = "offline" if kind.startswith("offline") else f"scripted:latency={args.latency}"
        policy = TimedPolicy(resolve_model(model, max_concurrency=args.max_concurrency), timer)
        with patched(timer, profiles):
            started = time.perf_counter()
            owned: Remembrance | None = None
            timed_embedder: TimedEmbedder | None = None
            if kind == "offline_real_memory":
                # What Simulation._services builds by itself, with the embedder and the memory timed.
                embedder = default_embedder(config.embedder)
                clear_text_cache(embedder)
                timed_embedder = TimedEmbedder(embedder, timer)
                with timer.measure("memory.open"):
                    spec = MemorySpec(directory=config.out / "memory", embedder=config.embedder)
                    owned = build_memory(spec, config.run_id, scenario_of(config.scenario), policy)
                    owned.embedder = timed_embedder  # type: ignore[assignment]
                memory: Any = TimedMemory(owned, timer, profiles)
            else:
                memory = NullMemory()
            try:
                summary = await Simulation(config, policy=policy, memory=memory).run()
            finally:
                if owned is not None:
                    owned.close()
            wall = time.perf_counter() - started
    turns = summary.turns
    return {
        "wall_s": wall,
        "turns": turns,
        "rounds_played": sum(c.rounds for c in summary.cycles),
        "cycles_played": len(summary.cycles),
        "model_calls": summary.model_calls,
        "fallbacks": summary.fallbacks,
        "seconds": dict(timer.seconds),
        "calls": dict(timer.calls),
        "embedded": timed_embedder.token_stats() if timed_embedder is not None else {},
    }


def summarise(kind: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median run's figures, with its breakdown in ms per turn."""
    walls = [r["wall_s"] for r in runs]
    median_run = sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]
    turns = median_run["turns"]
    wall = statistics.median(walls)
    seconds = median_run["seconds"]
    ms = {label: 1000 * s / turns for label, s in sorted(seconds.items())}
    embed = seconds.get("embed", 0.0)
    serial = {
        "embed": embed,
        "chroma (recall/remember/carry_over, less embedding)": sum(
            seconds.get(k, 0.0) for k in ("memory.recall", "memory.remember", "memory.carry_over")
        )
        - embed,
        "chroma open + 12 collections": seconds.get("memory.open", 0.0),
        "policy.adecide (agent turns in flight)": seconds.get("policy.adecide", 0.0),
        "samples.write_round (fsync)": seconds.get("samples.write_round", 0.0),
    }
    serial = {k: v for k, v in serial.items() if v > 0}
    rest = median_run["wall_s"] - sum(serial.values())
    breakdown = {k: round(1000 * v / turns, 3) for k, v in serial.items()}
    breakdown["rest: LangGraph, state (de)serialisation, pydantic, checkpoint"] = round(1000 * rest / turns, 3)
    return {
        "turns": turns,
        "rounds_played": median_run["rounds_played"],
        "cycles_played": median_run["cycles_played"],
        "model_calls": median_run["model_calls"],
        "fallbacks": median_run["fallbacks"],
        "wall_s": [round(w, 4) for w in walls],
        "wall_s_median": round(wall, 4),
        "turns_per_s": round(turns / wall, 2),
        "ms_per_turn": round(1000 * wall / turns, 3),
        "breakdown_ms_per_turn": breakdown,
        "timed_ms_per_turn": {k: round(v, 3) for k, v in ms.items()},
        "calls": median_run["calls"],
        **({"embedded": median_run["embedded"]} if median_run["embedded"] else {}),
    }


PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb", "sentence-transformers", "torch", "pydantic")


async def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    scenario = scenario_of(args.scenario)
    rounds = args.rounds or scenario.rounds_per_cycle
    load_before = os.getloadavg()

    # Load and warm the embedder the runs use. `default_embedder()` and `default_embedder(DEFAULT_MODEL)` are
    # separate functools.cache entries (two model loads), so warm the one Simulation asks for: the named one.
    started = time.perf_counter()
    embedder = default_embedder(RunConfig().embedder)
    embedder.encode(["warm"])
    embedder_load_s = time.perf_counter() - started

    results: dict[str, list[dict[str, Any]]] = {}
    warmup_s: dict[str, float] = {}
    for kind in CONFIGS:
        started = time.perf_counter()
        await one_run(kind, args, min(rounds, 2))  # first-call costs: graph compile, SQLite, Chroma, torch shapes
        warmup_s[kind] = round(time.perf_counter() - started, 3)
    for i in range(max(args.repeats, args.overhead_repeats)):
        for kind in CONFIGS:  # interleaved, so background load hits all configurations alike
            if i < (args.repeats if kind == "offline_real_memory" else args.overhead_repeats):
                results.setdefault(kind, []).append(await one_run(kind, args, rounds))

    summary = {kind: summarise(kind, runs) for kind, runs in results.items()}
    real, fake, null = (summary[k] for k in CONFIGS)
    report: dict[str, Any] = {
        "benchmark": "society",
        "turns_per_s_offline": real["turns_per_s"],
        "overhead_ms_per_turn": fake["ms_per_turn"],
        "ms_per_turn_offline": real["ms_per_turn"],
        "turns_per_s_offline_null_memory": null["turns_per_s"],
        "memory_ms_per_turn": round(real["ms_per_turn"] - null["ms_per_turn"], 3),
        "settings": {
            "scenario": args.scenario,
            "agents": len(scenario.agents),
            "cycles": args.cycles,
            "rounds": rounds,
            "turns": real["turns"],
            "seed": args.seed,
            "repeats": args.repeats,
            "overhead_repeats": args.overhead_repeats,
            "statistic": "median of repeats (one untimed warm-up run each)",
            "offline": "OfflinePathPolicy + Remembrance (embedded PersistentClient, temp dir) + real embedder",
            "overhead": f"LLMPolicy(ScriptedChatModel latency={args.latency}) + NullMemory",
            "embedder": embedder.name,
            "embedder_text_cache": "cleared before every run",
            "max_concurrency": args.max_concurrency,
            "recall_k": RunConfig().recall_k,
        },
        "configs": summary,
        "warmup": {"embedder_load_and_warm_s": round(embedder_load_s, 3), "warmup_run_s": warmup_s},
        "environment": environment(PACKAGES, load_before),
    }
    if args.profile:
        report["profile"] = await profile_offline(args, rounds)
    return report


async def profile_offline(args: argparse.Namespace, rounds: int) -> dict[str, Any]:
    """cProfile one offline + real-memory run: the event loop thread plus every worker-thread memory call."""
    threads = ThreadProfiles()
    main = cProfile.Profile()
    main.enable()
    try:
        run = await one_run("offline_real_memory", args, rounds, threads)
    finally:
        main.disable()
    stats = pstats.Stats(main)
    for profile in threads.profiles:
        stats.add(profile)
    PROFILE_FILE.parent.mkdir(parents=True, exist_ok=True)
    stats.dump_stats(PROFILE_FILE)
    text = io.StringIO()
    stats.stream = text  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(args.profile_top)
    stats.sort_stats("cumulative").print_stats(args.profile_top)
    return {
        "wall_s_under_profiler": round(run["wall_s"], 3),
        "file": str(PROFILE_FILE),
        "note": "event-loop thread + memory/sample worker threads merged; aiosqlite's own thread is not profiled",
        "top": text.getvalue(),
    }


def table(report: dict[str, Any]) -> str:
    s = report["settings"]
    lines = [
        f"society benchmark: scenario={s['scenario']} agents={s['agents']} cycles={s['cycles']} rounds={s['rounds']} "
        f"turns={s['turns']} repeats={s['repeats']}/{s['overhead_repeats']} (median)",
        "",
        f"  turns_per_s_offline   {report['turns_per_s_offline']:>10.1f}   (offline policy, Chroma + real embedder)",
        f"  overhead_ms_per_turn  {report['overhead_ms_per_turn']:>10.3f}   (instant scripted model, NullMemory)",
        f"  offline, no memory    {report['turns_per_s_offline_null_memory']:>10.1f}   turns/s",
        f"  memory ms per turn    {report['memory_ms_per_turn']:>10.3f}",
        "",
    ]
    for kind, figures in report["configs"].items():
        lines.append(
            f"{kind}: {figures['turns_per_s']:.1f} turns/s, {figures['ms_per_turn']:.3f} ms/turn, "
            f"wall {figures['wall_s']} s"
        )
        for label, ms in figures["breakdown_ms_per_turn"].items():
            lines.append(f"    {label:<64} {ms:>9.3f} ms/turn")
        overlapping = {k: v for k, v in figures["timed_ms_per_turn"].items() if k.startswith("checkpoint.")}
        for label, ms in overlapping.items():
            lines.append(f"    {'(' + label + ', in the background, overlaps)':<64} {ms:>9.3f} ms/turn")
        if "embedded" in figures:
            e = figures["embedded"]
            lines.append(
                f"    embedded {e['texts']} texts, {e['tokens_mean']} tokens each on average (max {e['tokens_max']}), "
                f"{e['texts_truncated']} over the model's {e['max_seq_length']}-token limit"
            )
        lines.append("")
    env = report["environment"]
    lines.append(
        f"warm-up: embedder {report['warmup']['embedder_load_and_warm_s']} s; cpus={env['cpu_count']} "
        f"torch_threads={env['torch_threads']} loadavg {env['loadavg_before']} -> {env['loadavg_after']}"
    )
    if "profile" in report:
        lines += ["", report["profile"]["top"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--scenario", default="amphoreus")
    parser.add_argument("--cycles", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=12, help="rounds per cycle (0: the scenario's)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per configuration (median reported)")
    parser.add_argument(
        "--overhead-repeats",
        type=int,
        default=9,
        help="timed runs of the (sub-second) null-memory configurations",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="the scripted model's latency in seconds")
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--profile", action="store_true", help="also cProfile one offline + real-memory run")
    parser.add_argument("--profile-top", type=int, default=30)
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if min(args.repeats, args.overhead_repeats, args.cycles) < 1 or args.rounds < 0:
        parser.error("--repeats, --overhead-repeats and --cycles must be at least 1, --rounds at least 0")

    report = asyncio.run(benchmark(args))
    if "profile" in report:  # the JSON keeps where the profile went, not its text
        report_json = report | {"profile": {k: v for k, v in report["profile"].items() if k != "top"}}
    else:
        report_json = report
    publish(report_json, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
