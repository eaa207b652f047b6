"""Benchmark Remembrance over ChromaIndex: write throughput against raw embedding, and recall latency at society scale.

    .venv/bin/python benchmarks/memory.py --json                 # one JSON object on stdout
    .venv/bin/python benchmarks/memory.py                        # a readable table
    .venv/bin/python benchmarks/memory.py --sizes 10000,100000   # record counts for the recall part
    .venv/bin/python benchmarks/memory.py --quick                # small sizes, few queries: a smoke run

Everything runs on an embedded PersistentClient in a temp dir (removed afterwards), with the real embedder
(all-MiniLM-L6-v2 on its default backend, ONNX Runtime; AMPHOREUS_EMBEDDER_BACKEND=torch for PyTorch), loaded
and warmed up before anything is timed, and the scenario's 12 agents.

Write (`write_ratio`): rounds of ~12 events (60-200 characters, each witnessed by 1-6 agents, a few public) go
through `Remembrance.remember`, one round per call, with the embedder's text cache cleared so every text is
really embedded. The same texts, in the same round-sized batches, also go through the embedder's own model
uncached (`embedder.encoder.encode`, same batch size) and through sentence-transformers on PyTorch
(`SentenceTransformer.encode`, normalize_embeddings=True). All are texts (events) per second; `write_ratio` is
remember / the embedder's raw encode, `write_ratio_vs_torch` remember / PyTorch's encode, each the median of the
per-repeat ratios (each repeat times all three round by round, back to back, so background load hits them
alike). The store starts empty for every repeat. A probe then writes the same rounds' records with no
embedding, as remember does and as one upsert per round (full, and vectors only), and gives the ceiling each
puts on `write_ratio` (`probe_write_calls.write_ratio_ceiling`).

Recall (`recall_p50_ms`, `recall_p99_ms`): for each size N a store with N records spread evenly over the 12
agents' collections plus a few hundred public records (a copy in every agent's collection, as the society files
them). Records are filed with `Remembrance.file` (as remember files them, in batches of at most 5000, without
embedding); each has a distinct text (a pool text plus its event id), so the index holds one vector per record;
their vectors are synthetic: by default real embeddings of event texts plus Gaussian noise, renormalised (cosine
~0.8 to their source text, so similarities and HNSW behave as with real memories), or random unit vectors
(`--vectors random`). Each recall is ONE agent's
`Remembrance.recall({agent: query}, k, now)` with a distinct, society-style query text (agents taken in turn),
after two untimed warm-up recalls per agent (the first recall on each collection after the build loads its
index, and reads the agent's records into the process once; those are reported apart, as is each agent's first
recall after closing and reopening the store).
Recall is read-only; after each one the benchmark marks what it returned as accessed with `touch`, as the
society does with a round's writes, and reports that write apart (`touch_ms`). Passes over the same queries:

- with embedding (the headline): text cache cleared, so the query is embedded inside recall;
- without embedding: the query texts are encoded first, so recall's encode is a cache hit;
- breakdown, with and without embedding: thin timing wrappers around the embedder, the collections (query),
  the result lists, the lookup of the hits among the records held in process and `rank` show where time goes;
- probes: single Chroma calls on one agent's collection (count, query variants, a 3-record update, get).

The JSON also goes to benchmarks/results/memory.json.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from bench_common import environment, publish

from amphoreus_graph.catalogs.scenario import MemoryConfig, scenario_of
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment, gist
from amphoreus_graph.memory import remembrance as remembrance_module
from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma
from amphoreus_graph.memory.embedder import Embedder, default_embedder
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.remembrance import Remembrance

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"
UPSERT_BATCH = 5000  # Chroma's max batch is larger, but the brief keeps build batches at most this
WARMUP_ROUNDS = 2  # untimed warm-up recalls per agent (the first one per collection loads its index)

# ---------------------------------------------------------------------------------------------------- texts

_LEXICON = [
    "memory",
    "flame",
    "dawn",
    "oath",
    "tide",
    "reason",
    "mercy",
    "strife",
    "the loom",
    "the council",
    "remembrance",
    "trickery",
    "passage",
    "the sky",
    "the earth",
    "the sea",
    "romance",
    "law",
    "death",
    "time",
    "the hearth",
    "ruin",
    "the wall",
    "the harvest",
    "the city",
    "the lost",
    "the living",
    "our elders",
]
_VERBS = [
    "hold the line here",
    "find the Coreflame first",
    "guard {target}",
    "learn what the Titans hide",
    "carry this to the Vortex",
    "keep faith with {target}",
    "see {target} answer for it",
    "outlast the Tide",
    "remember every name",
    "make them laugh again",
    "bring {target} home",
    "write it down before it fades",
]


def _what(rng: random.Random, actor: str, target: str, titan: Any, place: str) -> str:
    acts = [
        f"{actor} sought the {titan.coreflame}, but {target} already has it.",
        f"{actor} won the {titan.coreflame} from the Titan {titan.name}.",
        f"{actor} sought the {titan.coreflame} from the Titan {titan.name} and failed.",
        f"{actor} attacked {target}, who was hurt badly.",
        f"{actor} shielded {target} from harm.",
        f"{actor} tended to {target}.",
        f"{actor} offered an alliance to {target}, who accepted.",
        f"{actor} studied the lore of the Titans.",
        f"{actor} set down a record of this round so that it would outlast the cycle.",
        f"{actor} turned {target} against someone else with a lie.",
        f"{actor} tried to deceive {target} and was found out.",
        f"{actor} set out for {place}.",
        f"{actor} proclaimed a law.",
        f"{actor} made everyone nearby laugh.",
        f"{actor} fought back the Black Tide.",
        f"{actor} withdrew from the world for a while.",
    ]
    return acts[rng.randrange(len(acts))]


def _speech(rng: random.Random, target: str) -> str:
    w = rng.sample(_LEXICON, 3)
    verb = rng.choice(_VERBS).format(target=target)
    return f"{w[0].capitalize()}! I will {verb}. This is the way of {w[1]} and {w[2]}."


def make_events(rng: random.Random, rounds: int, per_round: int, public_fraction: float) -> list[list[MemoryEvent]]:
    """`rounds` batches of `per_round` events like the society's: 60-200 chars, 1-6 witnesses, a few public."""
    scenario = scenario_of("amphoreus").world.spec  # type: ignore[attr-defined]  # the default world's own spec
    agents = scenario.heir_names
    places = [loc.name for loc in scenario.locations]
    seen: set[str] = set()
    batches = []
    for r in range(1, rounds + 1):
        batch: list[MemoryEvent] = []
        cycle, round_ = (r - 1) // scenario.rounds_per_cycle + 1, (r - 1) % scenario.rounds_per_cycle + 1
        while len(batch) < per_round:
            actor, target = rng.sample(agents, 2)
            titan = rng.choice(scenario.titans)
            where = rng.choice(places)
            text = f"At {where}, {_what(rng, actor, target, titan, rng.choice(places))}"
            if rng.random() < 0.6:
                text += f' {actor} said: "{_speech(rng, target)}"'
            if not 60 <= len(text) <= 200 or text in seen:
                continue
            seen.add(text)
            public = rng.random() < public_fraction
            n = rng.randint(1, 6)
            witnesses = list(dict.fromkeys([actor, *rng.sample(agents, n)]))[:n]
            batch.append(
                MemoryEvent(
                    id=f"c{cycle}-r{round_}-{actor}-{len(batch)}",
                    text=text,
                    cycle=cycle,
                    round=round_,
                    tick=r,
                    witnesses=witnesses,
                    public=public,
                    importance=float(rng.randint(1, 10)),
                    kind=MemoryKind.SPEECH if '"' in text else MemoryKind.OBSERVATION,
                    involved=[actor, target],
                )
            )
        batches.append(batch)
    return batches


def make_queries(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """(agent, query) pairs shaped like the default world's memory_query: a situation's gist, the quest, the place."""
    scenario = scenario_of("amphoreus").world.spec  # type: ignore[attr-defined]
    agents = scenario.heir_names
    places = [loc.name for loc in scenario.locations]
    templates = scenario.situations or ["Another day passes at {location}."]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < n:
        agent = agents[len(out) % len(agents)]
        seeks = scenario.titan(scenario.heir(agent).seeks)
        situation = rng.choice(templates).format(location=rng.choice(places))
        where = rng.choice(places)
        query = f"{gist(situation)}. {agent} seeks the {seeks.coreflame} of {seeks.name} at {where}."
        if query in seen:
            continue
        seen.add(query)
        out.append((agent, query))
    return out


# ---------------------------------------------------------------------------------------------------- timing


class Timer:
    """Seconds and calls per label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[label] += time.perf_counter() - started
            self.calls[label] += 1

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


class TimedEmbedder:
    """The real embedder, timed (Remembrance only calls `encode`)."""

    def __init__(self, inner: Any, timer: Timer) -> None:
        self._inner = inner
        self._timer = timer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def encode(self, texts: list[str]) -> Any:
        with self._timer.measure("embed"):
            return self._inner.encode(texts)


class TimedCollection:
    """A Chroma collection whose count/query/update/upsert calls are timed under `<role>.<method>`."""

    def __init__(self, inner: Any, role: str, timer: Timer) -> None:
        self._inner = inner
        self._role = role
        self._timer = timer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in ("count", "query", "update", "upsert"):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self._timer.measure(f"{self._role}.{name}"):
                return attr(*args, **kwargs)

        return timed


@contextmanager
def instrumented(memory: Remembrance, timer: Timer) -> Iterator[None]:
    """Time the parts of recall/remember on this one memory object (the package's files are left untouched)."""
    index = chroma_index(memory)
    embedder, collections = memory.embedder, index._collections
    original_rank = remembrance_module.rank

    def timed_query(owner: str, vector: Any, n: int, *, exact: bool = False) -> Any:
        with timer.measure("index.query"):
            return ChromaIndex.query(index, owner, vector, n, exact=exact)

    def timed_resolve(owner: str, hits: list[tuple[str, float]]) -> Any:
        with timer.measure("_resolve"):
            return Remembrance._resolve(memory, owner, hits)

    def timed_rank(*args: Any, **kwargs: Any) -> Any:
        with timer.measure("rank"):
            return original_rank(*args, **kwargs)

    memory.embedder = TimedEmbedder(embedder, timer)  # type: ignore[assignment]
    index._collections = {a: TimedCollection(index._collection(a), "own", timer) for a in memory.agents}  # type: ignore[misc]
    index.query = timed_query  # type: ignore[method-assign]
    memory._resolve = timed_resolve  # type: ignore[method-assign]
    remembrance_module.rank = timed_rank  # type: ignore[assignment]
    try:
        yield
    finally:
        remembrance_module.rank = original_rank
        del index.query, memory._resolve
        memory.embedder, index._collections = embedder, collections


def chroma_index(memory: Remembrance) -> ChromaIndex:
    """The Chroma index under a benchmarked memory (its collections are probed and timed directly)."""
    assert isinstance(memory.index, ChromaIndex)
    return memory.index


@contextmanager
def chroma_store(
    tmp_root: str | None, society: str, agents: list[str], embedder: Any
) -> Iterator[tuple[Remembrance, Path]]:
    """A Remembrance on a fresh embedded PersistentClient in a temp dir, closed and removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="amphoreus-membench-", dir=tmp_root))
    memory: Remembrance | None = None
    try:
        client, lock = open_chroma(directory)
        memory = Remembrance(ChromaIndex(client, society, lock), agents, embedder)
        yield memory, directory
    finally:
        if memory is not None:
            memory.close()
        memory = client = None  # type: ignore[assignment]
        gc.collect()
        with suppress(Exception):
            from chromadb.api.shared_system_client import SharedSystemClient

            SharedSystemClient.clear_system_cache()  # let go of the Rust bindings holding the directory
        shutil.rmtree(directory, ignore_errors=True)


def disk_bytes(directory: Path) -> int:
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            with suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def ms(seconds: float) -> float:
    return round(1000 * seconds, 3)


# ---------------------------------------------------------------------------------------------------- write


def torch_encoder(embedder: Any) -> Any:
    """sentence-transformers on PyTorch for the embedder's model: itself when it already runs there."""
    if embedder.backend == "torch":
        return embedder.encoder
    return Embedder(embedder.name, backend="torch").encoder


def bench_write(args: argparse.Namespace, embedder: Any, agents: list[str]) -> dict[str, Any]:
    rng = random.Random(args.seed)
    batches = make_events(rng, args.write_rounds, args.batch, args.public_fraction)
    texts = [[e.text for e in b] for b in batches]
    n_texts = sum(len(t) for t in texts)
    # Baselines: the embedder's own model uncached ("raw"), and sentence-transformers on PyTorch ("torch"), the
    # usual way to run this model (the same encoder when the embedder itself runs on PyTorch).
    encoders = {"raw": embedder.encoder, "torch": torch_encoder(embedder)}
    for t in texts:  # untimed warm-up pass: every batch shape the timed passes will see
        for encoder in encoders.values():
            encoder.encode(t, embedder.batch_size)

    repeats: list[dict[str, Any]] = []
    vectors: list[np.ndarray] = []
    for rep in range(args.repeats):
        timer = Timer()
        seconds = {"raw": 0.0, "torch": 0.0, "remember": 0.0}
        vectors = []
        with chroma_store(args.tmp_dir, f"bench-write-{rep}", agents, embedder) as (memory, directory):
            embedder._cache.clear()
            with instrumented(memory, timer):
                # Round by round, the baselines and remember back to back (order rotating), so that load from
                # elsewhere falls on all alike.
                for i, (batch, batch_texts) in enumerate(zip(batches, texts, strict=True)):
                    steps = ["raw", "torch", "remember"]
                    for step in steps[(i + rep) % 3 :] + steps[: (i + rep) % 3]:
                        started = time.perf_counter()
                        if step == "remember":
                            memory.remember(batch)
                        elif step == "raw":
                            vectors.append(encoders["raw"].encode(batch_texts, embedder.batch_size))
                        else:
                            encoders["torch"].encode(batch_texts, embedder.batch_size)
                        seconds[step] += time.perf_counter() - started
            records = sum(len(memory.records(owner)) for owner in [*agents, PUBLIC])
            disk = disk_bytes(directory)
        raw_s, remember_s = seconds["raw"], seconds["remember"]
        upserts = timer.seconds["own.upsert"]
        upsert_calls = timer.calls["own.upsert"]
        repeats.append(
            {
                "raw_encode_s": round(raw_s, 4),
                "remember_s": round(remember_s, 4),
                "raw_encode_texts_per_s": round(n_texts / raw_s, 1),
                "remember_texts_per_s": round(n_texts / remember_s, 1),
                "ratio": round(raw_s / remember_s, 4),
                "torch_encode_texts_per_s": round(n_texts / seconds["torch"], 1),
                "ratio_vs_torch": round(seconds["torch"] / remember_s, 4),
                "remember_breakdown_ms_per_round": {
                    "embed (Embedder.encode)": ms(timer.seconds["embed"] / len(batches)),
                    "chroma upserts": ms(upserts / len(batches)),
                    "rest (rating, MemoryRecord, metadata, lists)": ms(
                        (remember_s - timer.seconds["embed"] - upserts) / len(batches)
                    ),
                },
                "upsert_calls_per_round": round(upsert_calls / len(batches), 2),
                "ms_per_upsert_call": ms(upserts / max(1, upsert_calls)),
                "records_written": records,
                "disk_mib": round(disk / 2**20, 2),
            }
        )
    ratios = [r["ratio"] for r in repeats]
    mid = sorted(repeats, key=lambda r: r["ratio"])[len(repeats) // 2]
    probe = probe_write_calls(args, embedder, agents, batches, vectors, mid["raw_encode_s"])
    return {
        "write_ratio": round(statistics.median(ratios), 4),
        "write_ratio_vs_torch": round(statistics.median(r["ratio_vs_torch"] for r in repeats), 4),
        "torch_encode_texts_per_s": round(statistics.median(r["torch_encode_texts_per_s"] for r in repeats), 1),
        "remember_texts_per_s": round(statistics.median(r["remember_texts_per_s"] for r in repeats), 1),
        "raw_encode_texts_per_s": round(statistics.median(r["raw_encode_texts_per_s"] for r in repeats), 1),
        "texts": n_texts,
        "rounds": len(batches),
        "records_per_round": round(mid["records_written"] / len(batches), 2),
        "text_chars": {
            "mean": round(statistics.mean(len(t) for b in texts for t in b), 1),
            "min": min(len(t) for b in texts for t in b),
            "max": max(len(t) for b in texts for t in b),
        },
        "witnesses_mean": round(statistics.mean(len(e.witnesses) for b in batches for e in b if not e.public), 2),
        "public_events": sum(e.public for b in batches for e in b),
        "median_repeat": mid,
        "repeats": repeats,
        "probe_write_calls": probe,
    }


def probe_write_calls(
    args: argparse.Namespace,
    embedder: Any,
    agents: list[str],
    batches: list[list[MemoryEvent]],
    vectors: list[Any],
    raw_encode_s: float,
) -> dict[str, Any]:
    """The same rounds' records written, without embedding, three ways: as remember writes them (one upsert per
    agent per round, public records in every agent's collection); as one upsert per round into a single collection
    (each record once); and as that one upsert with ids and vectors only (no documents, no metadata), the least
    any Chroma layout that keeps a vector per record must write. Each gives a ceiling on `write_ratio`:
    raw encode time / (raw encode time + that write time), over the same rounds."""
    rows_per_round, single_rows_per_round = [], []
    for batch, vecs in zip(batches, vectors, strict=True):
        rows: dict[str, list[tuple[MemoryRecord, list[float]]]] = {}
        single: list[tuple[MemoryRecord, list[float]]] = []
        for event, vector in zip(batch, vecs, strict=True):
            for owner in [PUBLIC] if event.public else list(dict.fromkeys(event.witnesses)):
                row = (MemoryRecord.of(event, owner, event.importance), vector.tolist())
                single.append(row)
                for agent in agents if event.public else [owner]:
                    rows.setdefault(agent, []).append(row)
        rows_per_round.append(rows)
        single_rows_per_round.append(single)

    def write(collection: Any, batch: list[tuple[MemoryRecord, list[float]]]) -> None:
        collection.upsert(
            ids=[r.id for r, _ in batch],
            documents=[r.text for r, _ in batch],
            metadatas=[r.metadata() for r, _ in batch],
            embeddings=[v for _, v in batch],
        )

    with chroma_store(args.tmp_dir, "bench-probe-per-owner", agents, embedder) as (memory, _):
        started = time.perf_counter()
        for rows in rows_per_round:
            for owner, owner_rows in rows.items():
                write(chroma_index(memory)._collection(owner), owner_rows)
        per_owner_s = time.perf_counter() - started

    def write_vectors_only(collection: Any, batch: list[tuple[MemoryRecord, list[float]]]) -> None:
        collection.upsert(ids=[r.id for r, _ in batch], embeddings=[v for _, v in batch])

    one_call_s = {}
    for label, writer in (("full", write), ("vectors_only", write_vectors_only)):
        with chroma_store(args.tmp_dir, f"bench-probe-single-{label}", [], embedder) as (memory, _):
            single = chroma_index(memory).client.get_or_create_collection(
                "m-bench-probe-all-owners", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
            started = time.perf_counter()
            for rows in single_rows_per_round:
                writer(single, rows)
            one_call_s[label] = time.perf_counter() - started
    n = len(rows_per_round)

    def ceiling(write_s: float) -> float:
        return round(raw_encode_s / (raw_encode_s + write_s), 4)

    return {
        "per_owner_upserts_ms_per_round": ms(per_owner_s / n),
        "one_upsert_ms_per_round": ms(one_call_s["full"] / n),
        "one_upsert_vectors_only_ms_per_round": ms(one_call_s["vectors_only"] / n),
        "upserts_per_round": round(sum(len(r) for r in rows_per_round) / n, 2),
        "raw_encode_ms_per_round": ms(raw_encode_s / n),
        "write_ratio_ceiling": {
            "per_owner_upserts": ceiling(per_owner_s),
            "one_upsert": ceiling(one_call_s["full"]),
            "one_upsert_vectors_only": ceiling(one_call_s["vectors_only"]),
        },
    }


# ---------------------------------------------------------------------------------------------------- recall


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


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
    dims = pool_vectors.shape[1]
    ticks = max(1, math.ceil(size / records_per_round))  # rounds a society would need to file `size` records
    rounds_per_cycle = scenario_of("amphoreus").rounds_per_cycle
    kinds = [MemoryKind.OBSERVATION, MemoryKind.SPEECH, MemoryKind.OBSERVATION, MemoryKind.REFLECTION]
    generate_s = upsert_s = 0.0
    upserts = 0
    owners = [(h, size // len(agents) + (i < size % len(agents))) for i, h in enumerate(agents)] + [(PUBLIC, public)]
    for owner, count in owners:
        for start in range(0, count, UPSERT_BATCH):
            n = min(UPSERT_BATCH, count - start)
            t0 = time.perf_counter()
            source = rng.integers(0, len(pool_texts), n)
            if args.vectors == "random":
                vectors = unit(rng.standard_normal((n, dims)))
            else:
                noise = rng.standard_normal((n, dims)) * (args.noise / math.sqrt(dims))
                vectors = unit(pool_vectors[source] + noise)
            created = rng.integers(1, ticks + 1, n)
            accessed = created + (rng.random(n) * (ticks + 1 - created)).astype(int) * (rng.random(n) < 0.3)
            importance = rng.integers(1, 11, n)
            slug = "public" if owner == PUBLIC else owner
            records = []
            for j in range(n):
                tick = int(created[j])
                cycle, round_ = (tick - 1) // rounds_per_cycle + 1, (tick - 1) % rounds_per_cycle + 1
                event_id = f"c{cycle}-r{round_}-{slug}-{start + j}"
                records.append(
                    MemoryRecord(
                        id=f"{event_id}@{owner}",
                        owner=owner,
                        text=f"{pool_texts[int(source[j])]} ({event_id})",  # distinct: one vector per record
                        event_id=event_id,
                        cycle=cycle,
                        round=round_,
                        created=tick,
                        last_accessed=int(accessed[j]),
                        importance=float(importance[j]),
                        kind=MemoryKind.SEED if owner == PUBLIC and j % 3 == 0 else kinds[j % len(kinds)],
                    )
                )
            by_text = dict(zip((r.text for r in records), vectors.tolist(), strict=True))
            batch = [(r, owner == PUBLIC) for r in records]
            t1 = time.perf_counter()
            for agent in agents if owner == PUBLIC else [owner]:
                memory.file(agent, batch, by_text)  # one upsert per agent (rows as remember writes them)
                upserts += 1
            t2 = time.perf_counter()
            generate_s += t1 - t0
            upsert_s += t2 - t1
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


def run_recalls(
    memory: Remembrance,
    queries: list[tuple[str, str]],
    k: int,
    first_tick: int,
    rounds_per_cycle: int,
    touches: list[float] | None = None,
) -> tuple[list[float], int]:
    """Time each recall (read-only), then mark what it returned as accessed, as the society does with the
    round's writes; the touch is timed apart, into `touches`. Every recall at its own tick."""
    latencies = []
    tick = first_tick
    for agent, query in queries:
        now = Moment(cycle=(tick - 1) // rounds_per_cycle + 1, round=(tick - 1) % rounds_per_cycle + 1, tick=tick)
        started = time.perf_counter()
        found = memory.recall({agent: query}, k, now)
        latencies.append(time.perf_counter() - started)
        assert len(found[agent]) == k, (agent, len(found[agent]))
        started = time.perf_counter()
        memory.touch([m.id for m in found[agent]], now)
        if touches is not None:
            touches.append(time.perf_counter() - started)
        tick += 1
    return latencies, tick


def summary_ms(latencies: list[float]) -> dict[str, float]:
    return {
        "p50": ms(pct(latencies, 50)),
        "p90": ms(pct(latencies, 90)),
        "p99": ms(pct(latencies, 99)),
        "mean": ms(statistics.mean(latencies)),
        "max": ms(max(latencies)),
    }


def slowest(latencies: list[float], queries: list[tuple[str, str]], n: int = 5) -> list[dict[str, Any]]:
    """The n slowest recalls of a pass: position in the pass, agent, ms (to tell a stall from a slow path)."""
    order = sorted(range(len(latencies)), key=lambda i: -latencies[i])[:n]
    return [{"index": i, "agent": queries[i][0], "ms": ms(latencies[i])} for i in sorted(order)]


def breakdown(timer: Timer, latencies: list[float]) -> dict[str, float]:
    """Mean ms per recall of each part (from the timing wrappers); `rest` is what no wrapper saw."""
    n, s = len(latencies), timer.seconds
    parts = {
        "embed": s["embed"],
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
    rng = random.Random(args.seed * 7919 + size)
    warm = WARMUP_ROUNDS * len(agents)
    everything = make_queries(rng, warm + args.queries)
    warmup, queries = everything[:warm], everything[warm:]
    rounds_per_cycle = scenario_of("amphoreus").rounds_per_cycle
    config = MemoryConfig()
    with chroma_store(args.tmp_dir, f"bench-recall-{size}", agents, embedder) as (memory, directory):
        started = time.perf_counter()
        build = build_store(memory, agents, size, args.public, pool_texts, pool_vectors, args, records_per_round)
        build["wall_s"] = round(time.perf_counter() - started, 3)
        build["disk_mib"] = round(disk_bytes(directory) / 2**20, 1)
        counts = {h: chroma_index(memory)._collection(h).count() for h in agents}
        build["records_per_heir"] = {"min": min(counts.values()), "max": max(counts.values())}
        build["public_records"] = args.public
        tick = build["ticks"] + 1

        embedder._cache.clear()
        first, tick = run_recalls(memory, warmup[: len(agents)], args.k, tick, rounds_per_cycle)
        _, tick = run_recalls(memory, warmup[len(agents) :], args.k, tick, rounds_per_cycle)

        embedder._cache.clear()  # with embedding: each query is embedded inside recall
        touches: list[float] = []
        with_embedding, tick = run_recalls(memory, queries, args.k, tick, rounds_per_cycle, touches)

        embedder.encode([q for _, q in queries])  # without embedding: encode is a cache hit
        without_embedding, tick = run_recalls(memory, queries, args.k, tick, rounds_per_cycle)

        breakdowns = {}
        for label, embedded in (("with_embedding", True), ("without_embedding", False)):
            if embedded:
                embedder._cache.clear()  # breakdown: with embedding again, parts timed
            else:
                embedder.encode([q for _, q in queries])
            timer = Timer()
            with instrumented(memory, timer):
                latencies, tick = run_recalls(memory, queries, args.k, tick, rounds_per_cycle)
            breakdowns[label] = breakdown(timer, latencies)

        probes = probe_recall_calls(memory, agents, embedder, queries, args.k * config.overfetch)
        build["disk_mib_after_recalls"] = round(disk_bytes(directory) / 2**20, 1)
        cold = reopen(memory, directory, agents, embedder, warmup[: len(agents)], args.k, tick, rounds_per_cycle)

    return {
        "records": size,
        "recall_ms_with_embedding": summary_ms(with_embedding),
        "recall_ms_without_embedding": summary_ms(without_embedding),
        "slowest_with_embedding": slowest(with_embedding, queries),
        "slowest_without_embedding": slowest(without_embedding, queries),
        "breakdown_mean_ms": breakdowns["with_embedding"],
        "breakdown_mean_ms_without_embedding": breakdowns["without_embedding"],
        "touch_ms": summary_ms(touches),
        "first_recall_per_heir_after_build_ms": summary_ms(first),
        "cold_reopen": cold,
        "probes_ms": probes,
        "build": build,
        "queries": len(queries),
    }


def reopen(
    memory: Remembrance,
    directory: Path,
    agents: list[str],
    embedder: Any,
    queries: list[tuple[str, str]],
    k: int,
    tick: int,
    rounds_per_cycle: int,
) -> dict[str, Any]:
    """Close the store, open it again (as a resumed simulation would) and time each agent's first recall."""
    from chromadb.api.shared_system_client import SharedSystemClient

    memory.close()
    index = chroma_index(memory)
    index.client = None  # type: ignore[assignment]  # let go of the client and its collections
    index._collections, index._access = {}, None
    gc.collect()
    SharedSystemClient.clear_system_cache()
    started = time.perf_counter()
    client, lock = open_chroma(directory)
    again = Remembrance(ChromaIndex(client, memory.society, lock), agents, embedder)
    open_s = time.perf_counter() - started
    try:
        embedder._cache.clear()
        latencies, _ = run_recalls(again, queries, k, tick, rounds_per_cycle)
    finally:
        again.close()
    return {"open_s": round(open_s, 3), "first_recall_per_heir_ms": summary_ms(latencies)}


def probe_recall_calls(
    memory: Remembrance, agents: list[str], embedder: Any, queries: list[tuple[str, str]], fetch: int
) -> dict[str, float]:
    """Median cost of single Chroma calls on this store, for what-if estimates (one agent's collection)."""
    agent = agents[0]
    own = chroma_index(memory)._collection(agent)
    vectors = embedder.encode([q for _, q in queries[:40]]).tolist()

    def median_ms(fn: Callable[[int], Any], n: int = 40) -> float:
        times = []
        for i in range(n):
            started = time.perf_counter()
            fn(i)
            times.append(time.perf_counter() - started)
        return ms(statistics.median(times))

    got = own.query(query_embeddings=vectors[:1], n_results=fetch, include=[])
    ids = got["ids"][0]
    metas = own.get(ids=ids[:3], include=["metadatas"])["metadatas"]
    return {
        "count": median_ms(lambda i: own.count()),
        f"query n={fetch} documents+metadatas+distances": median_ms(
            lambda i: own.query(
                query_embeddings=[vectors[i]], n_results=fetch, include=["documents", "metadatas", "distances"]
            )
        ),
        f"query n={fetch} distances only": median_ms(
            lambda i: own.query(query_embeddings=[vectors[i]], n_results=fetch, include=["distances"])
        ),
        f"query n={fetch} 12 vectors in one call": median_ms(
            lambda i: own.query(
                query_embeddings=vectors[:12], n_results=fetch, include=["documents", "metadatas", "distances"]
            ),
            10,
        ),
        "update 3 records (metadata only)": median_ms(lambda i: own.update(ids=ids[:3], metadatas=metas), 20),
        "get 3 records by id": median_ms(lambda i: own.get(ids=ids[:3], include=["metadatas"])),
        "embed one query (the embedder's model, uncached)": median_ms(
            lambda i: embedder.encoder.encode([queries[i][1]], 1)
        ),
    }


# ---------------------------------------------------------------------------------------------------- report


PACKAGES = ("chromadb", "sentence-transformers", "transformers", "torch", "numpy", "pydantic")


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    total_started = time.perf_counter()
    agents = scenario_of("amphoreus").agent_names

    started = time.perf_counter()
    embedder = default_embedder()
    embedder.encode(["warm up the model"])
    embedder._cache.clear()
    embedder_load_s = time.perf_counter() - started

    started = time.perf_counter()
    write = bench_write(args, embedder, agents)
    write_s = time.perf_counter() - started

    # The vector pool for synthetic records: real embeddings of event texts (its own seed, not timed).
    pool_events = [
        e for b in make_events(random.Random(args.seed + 1), args.pool // args.batch + 1, args.batch, 0) for e in b
    ]
    pool_texts = [e.text for e in pool_events][: args.pool]
    started = time.perf_counter()
    pool_vectors = embedder.encoder.encode(pool_texts, embedder.batch_size)
    pool_s = time.perf_counter() - started

    recall: dict[str, Any] = {}
    recall_s: dict[str, float] = {}
    for size in args.sizes:
        started = time.perf_counter()
        recall[str(size)] = bench_recall_size(
            args, embedder, agents, size, pool_texts, pool_vectors, write["records_per_round"]
        )
        recall_s[str(size)] = round(time.perf_counter() - started, 2)

    config = MemoryConfig()
    return {
        "benchmark": "memory",
        "write_ratio": write["write_ratio"],
        "remember_texts_per_s": write["remember_texts_per_s"],
        "raw_encode_texts_per_s": write["raw_encode_texts_per_s"],
        "write_ratio_vs_torch": write["write_ratio_vs_torch"],
        "torch_encode_texts_per_s": write["torch_encode_texts_per_s"],
        "recall_p50_ms": {s: r["recall_ms_with_embedding"]["p50"] for s, r in recall.items()},
        "recall_p99_ms": {s: r["recall_ms_with_embedding"]["p99"] for s, r in recall.items()},
        "recall_p50_ms_without_embedding": {s: r["recall_ms_without_embedding"]["p50"] for s, r in recall.items()},
        "recall_p99_ms_without_embedding": {s: r["recall_ms_without_embedding"]["p99"] for s, r in recall.items()},
        "goals": {
            "write_ratio >= 0.9": write["write_ratio"] >= 0.9,
            **(
                {"recall_p50_ms[100000] <= 10": recall["100000"]["recall_ms_with_embedding"]["p50"] <= 10}
                if "100000" in recall
                else {}
            ),
        },
        "settings": {
            "quick": args.quick,
            "sizes": args.sizes,
            "k": args.k,
            "overfetch": config.overfetch,
            "fetched_per_collection": args.k * config.overfetch,
            "recall_mode": config.mode.value,
            "agents": len(agents),
            "public_records": args.public,
            "queries_per_size": args.queries,
            "warmup_recalls_per_heir": WARMUP_ROUNDS,
            "recall_query_embedding": "included in recall_p50_ms / recall_p99_ms (text cache cleared); "
            "recall_*_without_embedding: query texts pre-encoded, so recall's encode is a cache hit",
            "recall_now": "each recall at its own tick, so last-accessed updates happen whenever own records return",
            "vectors": args.vectors,
            "noise": args.noise if args.vectors == "perturbed" else None,
            "vector_pool_texts": len(pool_texts),
            "upsert_batch_max": UPSERT_BATCH,
            "write_rounds": args.write_rounds,
            "write_batch_events": args.batch,
            "write_public_fraction": args.public_fraction,
            "embedder": embedder.name,
            "embedder_backend": embedder.backend,
            "embedder_batch_size": embedder.batch_size,
            "repeats": args.repeats,
            "statistic": "write: median of per-repeat ratios; recall: percentiles over the queries",
            "store": "Remembrance over ChromaIndex on chromadb.PersistentClient in a temp dir (removed afterwards)",
            "tmp_dir": args.tmp_dir or tempfile.gettempdir(),
            "seed": args.seed,
        },
        "write": write,
        "recall": recall,
        "timings_s": {
            "embedder_load_and_warm": round(embedder_load_s, 3),
            "write_phase": round(write_s, 2),
            "vector_pool_encode": round(pool_s, 2),
            "recall_phase_per_size": recall_s,
            "build_per_size": {s: r["build"]["wall_s"] for s, r in recall.items()},
            "total": round(time.perf_counter() - total_started, 2),
        },
        "environment": environment(PACKAGES, load_before),
    }


def table(report: dict[str, Any]) -> str:
    s, w = report["settings"], report["write"]
    lines = [
        f"memory benchmark: agents={s['agents']} k={s['k']} overfetch={s['overfetch']} vectors={s['vectors']} "
        f"queries={s['queries_per_size']}/size",
        "",
        f"write ({w['texts']} events in {w['rounds']} rounds of {s['write_batch_events']}, "
        f"{w['records_per_round']} records/round, median of {s['repeats']}):",
        f"  remember            {report['remember_texts_per_s']:>9.1f} texts/s",
        f"  raw encode ({s['embedder_backend']:<5})  {report['raw_encode_texts_per_s']:>9.1f} texts/s",
        f"  write_ratio         {report['write_ratio']:>9.3f}   (goal >= 0.9)",
        f"  torch encode (s-t)  {report['torch_encode_texts_per_s']:>9.1f} texts/s",
        f"  write_ratio_vs_torch {report['write_ratio_vs_torch']:>8.3f}",
    ]
    for label, v in w["median_repeat"]["remember_breakdown_ms_per_round"].items():
        lines.append(f"    {label:<48} {v:>9.2f} ms/round")
    mid = w["median_repeat"]
    lines.append(f"    {mid['upsert_calls_per_round']} upserts/round at {mid['ms_per_upsert_call']} ms")
    p = w["probe_write_calls"]
    lines.append(
        f"    probe: per-owner upserts {p['per_owner_upserts_ms_per_round']} ms/round vs one upsert "
        f"{p['one_upsert_ms_per_round']} ms/round ({p['one_upsert_vectors_only_ms_per_round']} ms vectors only); "
        f"raw encode {p['raw_encode_ms_per_round']} ms/round"
    )
    ceilings = ", ".join(f"{label} {v:.3f}" for label, v in p["write_ratio_ceiling"].items())
    lines.append(f"    write_ratio ceiling with Chroma writes as: {ceilings}")
    lines += ["", f"recall, one agent (ms)          {'p50':>8} {'p90':>8} {'p99':>8} {'mean':>8}"]
    for size, r in report["recall"].items():
        for label, key in (("with embedding", "recall_ms_with_embedding"), ("without", "recall_ms_without_embedding")):
            f = r[key]
            lines.append(
                f"  {size:>7} {label:<20} {f['p50']:>8.2f} {f['p90']:>8.2f} {f['p99']:>8.2f} {f['mean']:>8.2f}"
            )
    for size, r in report["recall"].items():
        b = r["build"]
        lines += [
            "",
            f"  {size} records: build {b['wall_s']} s (upsert {b['upsert_s']} s, {b['upsert_records_per_s']} rec/s), "
            f"disk {b['disk_mib']} MiB",
            f"    {'mean ms per recall':<44} {'with emb.':>10} {'without':>10}",
        ]
        without = r["breakdown_mean_ms_without_embedding"]
        for label, v in r["breakdown_mean_ms"].items():
            lines.append(f"    {label:<44} {v:>10.3f} {without[label]:>10.3f}")
        for label, f in (
            ("first recall per agent after build", r["first_recall_per_heir_after_build_ms"]),
            ("first recall per agent after reopen", r["cold_reopen"]["first_recall_per_heir_ms"]),
        ):
            lines.append(f"    {label:<56} p50 {f['p50']:>8.3f} ms  max {f['max']:>8.3f} ms")
        touch, label = r["touch_ms"], "touch (mark used memories, one write)"
        lines.append(f"    {label:<56} p50 {touch['p50']:>8.3f} ms  p99 {touch['p99']:>8.3f} ms")
        for label, v in r["probes_ms"].items():
            lines.append(f"    probe: {label:<37} {v:>8.3f} ms")
    env, t = report["environment"], report["timings_s"]
    lines += [
        "",
        f"cpus={env['cpu_count']} torch_threads={env['torch_threads']} loadavg {env['loadavg_before']} -> "
        f"{env['loadavg_after']}; total {t['total']} s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--sizes", default=None, help="total records for the recall part, comma-separated (default 10000,100000)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, few queries, one repeat")
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per size")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument(
        "--public", type=int, default=300, help="public records (each filed in every agent's collection)"
    )
    parser.add_argument("--vectors", choices=("perturbed", "random"), default="perturbed")
    parser.add_argument("--noise", type=float, default=0.75, help="noise norm relative to the unit source vector")
    parser.add_argument("--pool", type=int, default=600, help="real texts embedded as the synthetic vectors' sources")
    parser.add_argument("--write-rounds", type=int, default=40, help="rounds (remember calls) per write repeat")
    parser.add_argument("--batch", type=int, default=12, help="events per round")
    parser.add_argument("--public-fraction", type=float, default=0.08, help="share of events filed publicly")
    parser.add_argument("--repeats", type=int, default=3, help="write repeats (median reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tmp-dir", default=None, help="where the temp stores go (default: the system temp dir)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the JSON is written")
    parser.add_argument("--no-save", action="store_true", help="do not write the results file")
    args = parser.parse_args(argv)
    if args.sizes is None:
        args.sizes = "1200,6000" if args.quick else "10000,100000"
    if args.quick:
        args.queries = min(args.queries, 40)
        args.write_rounds = min(args.write_rounds, 10)
        args.repeats = 1
        args.pool = min(args.pool, 240)
    try:
        args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes: expected comma-separated integers, e.g. 10000,100000")
    if not args.sizes or min(args.sizes) < 120 or min(args.queries, args.repeats, args.k, args.write_rounds) < 1:
        parser.error("--sizes must be at least 120 each; --queries, --repeats, --k and --write-rounds at least 1")

    report = benchmark(args)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
