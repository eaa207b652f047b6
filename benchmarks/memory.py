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
- breakdown, with and without embedding: thin timing wrappers around the embedder, the search of the agent's
  held vectors (in process: the run's own locked store), the society's collection (a Chroma query, filtered to the
  agent), the result lists, the lookup of the hits among the records held in process and `rank` show where time
  goes;
- probes: single Chroma calls on one agent's collection (count, query variants, a 3-record update, get).

The JSON also goes to benchmarks/results/memory.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import publish, results_options
from memory_build import pool_texts
from memory_recall import bench_recall_size
from memory_report import Measured, report, table
from memory_timing import timed
from memory_write import bench_write

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.models.embedder import default_embedder

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Write first, then recall at each size (its store's vectors drawn around the pool's real embeddings),
    every phase timed so the report says where the run's time went."""
    load_before = os.getloadavg()
    started = time.perf_counter()
    agents = scenario_of("amphoreus").agent_names
    embedder, embedder_load_s = timed(_warm_embedder)
    write, write_s = timed(bench_write, args, embedder, agents)
    texts = pool_texts(args)
    vectors, pool_s = timed(embedder.encoder.encode, texts, embedder.batch_size)
    recall: dict[str, dict[str, Any]] = {}
    recall_s: dict[str, float] = {}
    for size in args.sizes:
        recall[str(size)], seconds = timed(
            bench_recall_size, args, embedder, agents, size, texts, vectors, write["records_per_round"]
        )
        recall_s[str(size)] = round(seconds, 2)
    timings = {
        "embedder_load_and_warm": round(embedder_load_s, 3),
        "write_phase": round(write_s, 2),
        "vector_pool_encode": round(pool_s, 2),
        "recall_phase_per_size": recall_s,
    }
    return report(args, Measured(agents, embedder, texts, write, recall, timings, started, load_before))


def _warm_embedder() -> Any:
    """The real embedder, loaded and run once with its text cache emptied, so no timed part pays for the load."""
    embedder = default_embedder()
    embedder.encode(["warm up the model"])
    embedder._cache.clear()
    return embedder


def _parser() -> argparse.ArgumentParser:
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
    results_options(parser, RESULTS)
    return parser


def _settle(args: argparse.Namespace, parser: argparse.ArgumentParser) -> argparse.Namespace:
    """`--quick` caps what it names (an explicit smaller value stays); sizes become integers; nonsense stops
    here, before a minute is spent loading the embedder."""
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
    return args


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = _settle(parser.parse_args(argv), parser)
    result = benchmark(args)
    publish(result, table(result), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
