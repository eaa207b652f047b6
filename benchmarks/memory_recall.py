"""The memory benchmark's recall part (see memory.py): one agent's recall on a filled store, timed with and
without the query's embedding, in parts, after a reopen, and beside single Chroma calls."""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from memory_build import build_store
from memory_instrument import instrumented
from memory_probes import probe_recall_calls
from memory_store import chroma_index, chroma_store, disk_mib, forget_clients, open_memory
from memory_timing import Timer, ms, pct, slowest, summary_ms, timed
from memory_workload import cycle_round, make_queries

from amphoreus_graph.catalogs.scenario import MemoryConfig, scenario_of
from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.memory.remembrance import Remembrance

WARMUP_ROUNDS = 2  # untimed warm-up recalls per agent (the first one per collection loads its index)


@dataclass
class Clock:
    """The society's clock over a size's recalls: each recall at its own tick, so last-accessed updates happen
    whenever an agent's own records come back."""

    tick: int
    rounds_per_cycle: int

    def advance(self) -> Moment:
        cycle, round_ = cycle_round(self.tick, self.rounds_per_cycle)
        now = Moment(cycle=cycle, round=round_, tick=self.tick)
        self.tick += 1
        return now


def run_recalls(
    memory: Remembrance, queries: list[tuple[str, str]], k: int, clock: Clock, touches: list[float] | None = None
) -> list[float]:
    """Time each recall (read-only), then mark what it returned as accessed, as the society does with the
    round's writes; the touch is timed apart, into `touches`."""
    latencies = []
    for agent, query in queries:
        now = clock.advance()
        started = time.perf_counter()
        found = memory.recall({agent: query}, k, now)
        latencies.append(time.perf_counter() - started)
        assert len(found[agent]) == k, (agent, len(found[agent]))
        started = time.perf_counter()
        memory.touch({agent: [m.id for m in found[agent]]}, now)
        if touches is not None:
            touches.append(time.perf_counter() - started)
    return latencies


def breakdown(timer: Timer, latencies: list[float]) -> dict[str, float]:
    """Mean ms per recall of each part (from the timing wrappers); `rest` is what no wrapper saw."""
    n, s = len(latencies), timer.seconds
    parts = {
        "embed": s["embed"],
        "search the agent's held vectors (in process)": s["held.nearest"],
        "query the agent's collection (chroma)": s["own.query"],
        "result lists (ids, similarities)": s["index.query"] - s["own.query"],
        "records by id (held in process)": s["_resolve"],
        "rank": s["rank"],
    }
    parts["rest"] = sum(latencies) - sum(parts.values())
    out = {label: ms(v / n) for label, v in parts.items()}
    out["total"] = ms(statistics.mean(latencies))
    out["total_p50"] = ms(pct(latencies, 50))
    return out


def bench_recall_size(
    args: argparse.Namespace,
    embedder: Any,
    agents: list[str],
    size: int,
    pool_texts: list[str],
    pool_vectors: np.ndarray,
    records_per_round: float,
) -> dict[str, Any]:
    """Every recall figure for a store of `size` records, from one build: the passes share the store, so they
    differ only in what each one times."""
    warm = WARMUP_ROUNDS * len(agents)
    everything = make_queries(random.Random(args.seed * 7919 + size), warm + args.queries)
    warmup, queries = everything[:warm], everything[warm:]
    with chroma_store(args.tmp_dir, f"bench-recall-{size}", agents, embedder) as (memory, directory):
        build, wall_s = timed(
            build_store, memory, agents, size, args.public, pool_texts, pool_vectors, args, records_per_round
        )
        build["wall_s"] = round(wall_s, 3)
        build["disk_mib"] = disk_mib(directory, 1)
        counts = {h: len(chroma_index(memory).get(h).ids) for h in agents}
        build["records_per_heir"] = {"min": min(counts.values()), "max": max(counts.values())}
        build["public_records"] = args.public
        clock = Clock(build["ticks"] + 1, scenario_of("amphoreus").rounds_per_cycle)
        embedder._cache.clear()
        first = run_recalls(memory, warmup[: len(agents)], args.k, clock)
        run_recalls(memory, warmup[len(agents) :], args.k, clock)
        passes = _timed_passes(memory, embedder, queries, args.k, clock)
        probes = probe_recall_calls(memory, agents, embedder, queries, args.k * MemoryConfig().overfetch)
        build["disk_mib_after_recalls"] = disk_mib(directory, 1)
        cold = reopen(memory, directory, agents, embedder, warmup[: len(agents)], args.k, clock)
    return {
        "records": size,
        **passes,
        "first_recall_per_heir_after_build_ms": summary_ms(first),
        "cold_reopen": cold,
        "probes_ms": probes,
        "build": build,
        "queries": len(queries),
    }


def _timed_passes(
    memory: Remembrance, embedder: Any, queries: list[tuple[str, str]], k: int, clock: Clock
) -> dict[str, Any]:
    """The same queries with the query's embedding inside recall (text cache cleared) and without it (texts
    encoded first, so recall's encode is a cache hit); then both again with the parts timed, apart from the
    headline passes so the wrappers' own cost stays out of those."""
    embedder._cache.clear()
    touches: list[float] = []
    with_embedding = run_recalls(memory, queries, k, clock, touches)
    embedder.encode([q for _, q in queries])
    without_embedding = run_recalls(memory, queries, k, clock)
    breakdowns = {}
    for label, embedded in (("with_embedding", True), ("without_embedding", False)):
        if embedded:
            embedder._cache.clear()
        else:
            embedder.encode([q for _, q in queries])
        timer = Timer()
        with instrumented(memory, timer):
            latencies = run_recalls(memory, queries, k, clock)
        breakdowns[label] = breakdown(timer, latencies)
    return {
        "recall_ms_with_embedding": summary_ms(with_embedding),
        "recall_ms_without_embedding": summary_ms(without_embedding),
        "slowest_with_embedding": slowest(with_embedding, queries),
        "slowest_without_embedding": slowest(without_embedding, queries),
        "breakdown_mean_ms": breakdowns["with_embedding"],
        "breakdown_mean_ms_without_embedding": breakdowns["without_embedding"],
        "touch_ms": summary_ms(touches),
    }


def reopen(
    memory: Remembrance,
    directory: Path,
    agents: list[str],
    embedder: Any,
    queries: list[tuple[str, str]],
    k: int,
    clock: Clock,
) -> dict[str, Any]:
    """Close the store, open it again (as a resumed simulation would) and time each agent's first recall."""
    memory.close()
    index = chroma_index(memory)
    index.client = None  # type: ignore[assignment]  # let go of the client and its collections
    index._rows, index._access, index._moved = None, None, set()
    forget_clients()
    again, open_s = timed(open_memory, directory, memory.society, agents, embedder)
    try:
        embedder._cache.clear()
        latencies = run_recalls(again, queries, k, clock)
    finally:
        again.close()
    return {"open_s": round(open_s, 3), "first_recall_per_heir_ms": summary_ms(latencies)}
