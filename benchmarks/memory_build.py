"""The filled stores the memory benchmark (see memory.py) times recall on: N records over the agents'
collections plus public ones, filed as remember files them but with synthetic vectors, so a 100k-record store
builds in minutes instead of embedding 100k texts."""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

import numpy as np
from memory_workload import cycle_round, make_events

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.ids import record_id
from amphoreus_graph.contracts.memory import MemoryKind
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.remembrance import Remembrance

UPSERT_BATCH = 5000  # Chroma's max batch is larger, but the brief keeps build batches at most this
KINDS = [MemoryKind.OBSERVATION, MemoryKind.SPEECH, MemoryKind.OBSERVATION, MemoryKind.REFLECTION]


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def pool_texts(args: argparse.Namespace) -> list[str]:
    """Event texts whose real embeddings the synthetic vectors are drawn around (their own seed: the write
    part's texts stay apart)."""
    rounds = args.pool // args.batch + 1
    events = [e for b in make_events(random.Random(args.seed + 1), rounds, args.batch, 0) for e in b]
    return [e.text for e in events][: args.pool]


def build_store(
    memory: Remembrance,
    agents: list[str],
    size: int,
    public: int,
    pool_texts: list[str],
    pool_vectors: np.ndarray,
    args: argparse.Namespace,
    records_per_round: float,
) -> dict[str, Any]:
    """`size` records spread over the agents' collections plus `public` public ones, upserted directly; a public
    record goes into every agent's collection, as `remember` files it."""
    rng = np.random.default_rng(args.seed + size)
    ticks = max(1, math.ceil(size / records_per_round))  # rounds a society would need to file `size` records
    generate_s = upsert_s = 0.0
    upserts = 0
    owners = [(h, size // len(agents) + (i < size % len(agents))) for i, h in enumerate(agents)] + [(PUBLIC, public)]
    for owner, count in owners:
        for start in range(0, count, UPSERT_BATCH):
            n = min(UPSERT_BATCH, count - start)
            t0 = time.perf_counter()
            records, vectors = _synthetic_records(rng, owner, start, n, ticks, pool_texts, pool_vectors, args)
            by_text = dict(zip((r.text for r in records), vectors.tolist(), strict=True))
            batch = [(r, owner == PUBLIC) for r in records]
            t1 = time.perf_counter()
            holders = agents if owner == PUBLIC else [owner]
            memory.index.write([memory.file(agent, batch, by_text) for agent in holders])  # as remember writes them
            upserts += 1
            generate_s += t1 - t0
            upsert_s += time.perf_counter() - t1
    memory._held.clear()  # the first recall per agent reads its collection, as after a reopen
    total = size + public * len(agents)
    return {
        "records": size + public,
        "rows": total,
        "generate_s": round(generate_s, 3),
        "upsert_s": round(upsert_s, 3),
        "upsert_calls": upserts,
        "upsert_records_per_s": round(total / upsert_s, 1) if upsert_s else None,
        "ticks": ticks,
    }


def _synthetic_records(
    rng: np.random.Generator,
    owner: str,
    start: int,
    n: int,
    ticks: int,
    pool_texts: list[str],
    pool_vectors: np.ndarray,
    args: argparse.Namespace,
) -> tuple[list[MemoryRecord], np.ndarray]:
    """`n` records of `owner` from number `start` on, with their vectors: created over the society's `ticks`,
    some accessed since, each text distinct (a pool text plus its event id) so the index holds one vector each."""
    source = rng.integers(0, len(pool_texts), n)
    vectors = _synthetic_vectors(rng, source, pool_vectors, args)
    created = rng.integers(1, ticks + 1, n)
    accessed = created + (rng.random(n) * (ticks + 1 - created)).astype(int) * (rng.random(n) < 0.3)
    importance = rng.integers(1, 11, n)
    rounds_per_cycle = scenario_of("amphoreus").rounds_per_cycle
    slug = "public" if owner == PUBLIC else owner
    records = []
    for j in range(n):
        tick = int(created[j])
        cycle, round_ = cycle_round(tick, rounds_per_cycle)
        event_id = f"c{cycle}-r{round_}-{slug}-{start + j}"
        records.append(
            MemoryRecord(
                id=record_id(event_id, None if owner == PUBLIC else owner),
                owner=owner,
                text=f"{pool_texts[int(source[j])]} ({event_id})",  # distinct: one vector per record
                event_id=event_id,
                cycle=cycle,
                round=round_,
                created=tick,
                last_accessed=int(accessed[j]),
                importance=float(importance[j]),
                kind=MemoryKind.SEED if owner == PUBLIC and j % 3 == 0 else KINDS[j % len(KINDS)],
            )
        )
    return records, vectors


def _synthetic_vectors(
    rng: np.random.Generator, source: np.ndarray, pool_vectors: np.ndarray, args: argparse.Namespace
) -> np.ndarray:
    """Unit vectors near their source texts' real embeddings (`--vectors perturbed`, cosine ~0.8 at the default
    noise, so similarities and HNSW behave as with real memories), or random ones (`--vectors random`)."""
    n, dims = len(source), pool_vectors.shape[1]
    if args.vectors == "random":
        return unit(rng.standard_normal((n, dims)))
    noise = rng.standard_normal((n, dims)) * (args.noise / math.sqrt(dims))
    return unit(pool_vectors[source] + noise)
