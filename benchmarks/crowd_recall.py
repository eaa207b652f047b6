"""How well Chroma's own search finds an agent's rows in a society's one rows collection, by HNSW setting.

Where nothing holds the store's lock (a `chroma run` server, Studio's shared client), `ChromaIndex.query` asks
Chroma's HNSW graph for an agent's nearest rows, filtered to that agent, in the society's one collection: every
agent's own rows plus its copy of every public text (holder tails keep the copies apart: holder_tails.py). A
lighter graph (fewer neighbours per node `M`, a smaller `ef_construction`) is cheaper to write
(benchmarks/chroma_inserts.py) but may miss rows. This builds such a society from real embeddings of made-up
texts, writes it through `ChromaIndex` into a collection made with each setting, and asks, for every agent's own
rows, a query near each (the row's vector plus noise): the share of the exact top 5 (ranked over the agent's rows
alone) that Chroma's answer holds, and how often its first answer is not the exact first. JSON goes to
benchmarks/results/crowd_recall.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import numpy as np  # noqa: E402
from chromadb.api.collection_configuration import CreateCollectionConfiguration, CreateHNSWConfiguration  # noqa: E402
from chromadb.config import Settings  # noqa: E402

from amphoreus_graph.memory.chroma_index import ROWS, SYNC_THRESHOLD, ChromaIndex  # noqa: E402
from amphoreus_graph.memory.index import RowChanges, Rows, nearest  # noqa: E402
from amphoreus_graph.memory.naming import internal_collection  # noqa: E402
from amphoreus_graph.models.embedder import default_embedder  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "crowd_recall.json"
PACKAGES = ("chromadb", "sentence-transformers")
SETTINGS = [(64, 100), (16, 100), (64, 32), (16, 32)]  # (M, ef_construction)
K = 5
PLACES = ["the forge", "the harbour", "the loom-house", "the gate", "the archive", "the orchard", "the arena"]
DEEDS = ["argued over", "repaired", "guarded", "lost", "found", "sang about", "traded", "burned", "mapped"]
THINGS = ["a bronze key", "the tide charts", "a cracked lyre", "grain for winter", "a sealed letter", "old oaths"]


def _texts(rng: np.random.Generator, n: int, who: str) -> list[str]:
    return [
        f"{who} {rng.choice(DEEDS)} {rng.choice(THINGS)} at {rng.choice(PLACES)} on day {int(rng.integers(1, 400))}."
        for _ in range(n)
    ]


Society = tuple[list[str], np.ndarray, dict[str, list[str]], dict[str, np.ndarray]]


def society(agents: int, public: int, own: int) -> Society:
    """Public texts and their vectors; each agent's own texts and vectors (real embeddings, made-up words)."""
    rng = np.random.default_rng(3)
    embedder = default_embedder()
    public_texts = _texts(rng, public, "The city")
    names = [f"agent-{a:04d}" for a in range(agents)]
    own_texts = {name: _texts(rng, own, name) for name in names}
    every = [*public_texts, *(t for name in names for t in own_texts[name])]
    vectors = np.asarray(embedder.encode(every), dtype=np.float32)
    own_vectors = {name: vectors[public + i * own : public + (i + 1) * own] for i, name in enumerate(names)}
    return public_texts, vectors[:public], own_texts, own_vectors


def measure(built: Society, neighbors: int, ef_construction: int, noise: float) -> dict[str, Any]:
    public_texts, public_vectors, own_texts, own_vectors = built
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory(prefix="amphoreus-crowd-recall-") as folder:
        client = chromadb.PersistentClient(path=folder, settings=Settings(anonymized_telemetry=False))
        hnsw = CreateHNSWConfiguration(
            space="cosine", max_neighbors=neighbors, ef_construction=ef_construction, sync_threshold=SYNC_THRESHOLD
        )
        client.create_collection(
            internal_collection("crowd", ROWS), configuration=CreateCollectionConfiguration(hnsw=hnsw)
        )
        index = ChromaIndex(client, "crowd")  # no lock: Chroma answers every search, as a server would
        started = time.perf_counter()
        for name, texts in own_texts.items():
            ids = [f"p{i}" for i in range(len(public_texts))] + [f"o{i}" for i in range(len(texts))]
            vectors = np.vstack([public_vectors, own_vectors[name]]).tolist()
            index.write([RowChanges(name, written=Rows(ids, [*public_texts, *texts], [{}] * len(ids), vectors))])
        write_s = time.perf_counter() - started
        found, misses, asked, query_s = 0, 0, 0, 0.0
        for name, vectors in own_vectors.items():
            held = index.get(name, vectors=True)
            for vector in vectors:
                query = vector + noise * rng.standard_normal(vector.shape).astype(np.float32)
                exact = [row for row, _ in nearest(held.ids, held.vectors, query.tolist(), K)]
                started = time.perf_counter()
                answer = [row for row, _ in index.query(name, query.tolist(), K)]
                query_s += time.perf_counter() - started
                found += len(set(answer) & set(exact))
                misses += answer[:1] != exact[:1]
                asked += 1
    return {
        "M": neighbors,
        "ef_construction": ef_construction,
        "recall_at_5": round(found / (K * asked), 4),
        "first_missed": misses,
        "queries": asked,
        "write_s": round(write_s, 1),
        "query_ms": round(1000 * query_s / asked, 2),
    }


def table(report: dict[str, Any]) -> str:
    lines = [
        f"{report['agents']} agents x ({report['public']} public copies + {report['own']} own rows), "
        f"noise {report['noise']}: Chroma's filtered search against the exact ranking"
    ]
    lines.append(f"{'M':>4} {'efc':>4} {'recall@5':>9} {'first missed':>13} {'write s':>8} {'query ms':>9}")
    for r in report["settings"]:
        lines.append(
            f"{r['M']:>4} {r['ef_construction']:>4} {r['recall_at_5']:>9} {r['first_missed']:>6} of {r['queries']:<5}"
            f"{r['write_s']:>8} {r['query_ms']:>9}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--public", type=int, default=100, help="public texts, each copied to every agent")
    parser.add_argument("--own", type=int, default=10, help="each agent's own rows")
    parser.add_argument("--noise", type=float, default=0.02, help="per-value noise added to a row to query near it")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    built = society(args.agents, args.public, args.own)
    settings = [measure(built, m, efc, args.noise) for m, efc in SETTINGS]
    report = {
        "agents": args.agents,
        "public": args.public,
        "own": args.own,
        "noise": args.noise,
        "settings": settings,
        "environment": environment(PACKAGES, load_before),
    }
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
