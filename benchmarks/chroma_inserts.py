"""What a big write costs Chroma as a collection grows, by HNSW setting: is it the index's persists or its inserts?

A society's round writes thousands of rows into one collection (`…int.tailedrows`) in calls of Chroma's batch size.
This writes `--rows` random 400-value vectors (384 + the holder tail) a round, with a 150-character document and a
100-character metadata value each, for `--rounds` rounds, per setting: `sync_threshold` (10, the store's; or a
million: never persisted during the run), `max_neighbors` (M) and `ef_construction`. `--write-path` measures the
store's setting instead with documents and without, each also deleting half the previous round's rows first.
Printed: each round's wall and process CPU seconds. Random vectors are harder for HNSW than a society's texts: read
the ratios, not the values. JSON goes to benchmarks/results/chroma_inserts.json.
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

from amphoreus_graph.memory.chroma_index import ROW_NEIGHBORS, SYNC_THRESHOLD  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "chroma_inserts.json"
PACKAGES = ("chromadb",)
DIMENSION = 400
# (sync threshold, M, ef_construction): the store's own, never persisted, and lighter graphs
SETTINGS = [(SYNC_THRESHOLD, ROW_NEIGHBORS, 100), (1_000_000, ROW_NEIGHBORS, 100), (SYNC_THRESHOLD, 16, 100),
            (SYNC_THRESHOLD, ROW_NEIGHBORS, 32), (SYNC_THRESHOLD, 16, 32)]  # fmt: skip


def write_rounds(
    rounds: int, rows: int, setting: tuple[int, int, int], *, documents: bool = True, delete_share: float = 0.0
) -> dict[str, Any]:
    """Each round's wall and CPU seconds for one setting, in a fresh embedded store: each round first deletes
    `delete_share` of the previous round's rows (a reset's forgetting), then writes its own."""
    sync_threshold, neighbors, ef_construction = setting
    hnsw = CreateHNSWConfiguration(
        space="cosine", sync_threshold=sync_threshold, max_neighbors=neighbors, ef_construction=ef_construction
    )
    rng = np.random.default_rng(0)
    measured = []
    with tempfile.TemporaryDirectory(prefix="amphoreus-chroma-inserts-") as folder:
        client = chromadb.PersistentClient(path=folder, settings=Settings(anonymized_telemetry=False))
        collection = client.create_collection("rows-probe", configuration=CreateCollectionConfiguration(hnsw=hnsw))
        batch = client.get_max_batch_size()
        for round_ in range(rounds):
            vectors = rng.standard_normal((rows, DIMENSION)).astype(np.float32)
            wall, cpu = time.perf_counter(), time.process_time()
            gone = [f"{round_ - 1}-{i}" for i in range(int(rows * delete_share))] if round_ else []
            for start in range(0, len(gone), batch):
                collection.delete(ids=gone[start : start + batch])
            for start in range(0, rows, batch):
                part = vectors[start : start + batch]
                collection.upsert(
                    ids=[f"{round_}-{start + i}" for i in range(len(part))],
                    embeddings=part,
                    documents=["x" * 150] * len(part) if documents else None,
                    metadatas=[{"holder": "h" * 100}] * len(part),
                )
            measured.append(
                {
                    "rows_after": rows * (round_ + 1),
                    "wall_s": round(time.perf_counter() - wall, 2),
                    "cpu_s": round(time.process_time() - cpu, 2),
                }
            )
    return {
        "sync_threshold": sync_threshold,
        "M": neighbors,
        "ef_construction": ef_construction,
        "documents": documents,
        "delete_share": delete_share,
        "rounds": measured,
    }


def table(report: dict[str, Any]) -> str:
    lines = [f"{report['rows']} random rows a round, CPU s of each round (wall s)"]
    for row in report["settings"]:
        rounds = "  ".join(f"{r['cpu_s']:>6} ({r['wall_s']})" for r in row["rounds"])
        what = f"docs {'yes' if row['documents'] else 'no':>3}  deletes {row['delete_share']:>4}"
        lines.append(
            f"sync {row['sync_threshold']:>7}  M {row['M']:>3}  efc {row['ef_construction']:>3}  {what}:  {rounds}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows a round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--write-path",
        action="store_true",
        help="instead of the HNSW settings: the store's setting with and without documents, and with deletes",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    if args.write_path:
        store = SETTINGS[0]
        settings = [
            write_rounds(args.rounds, args.rows, store),
            write_rounds(args.rounds, args.rows, store, documents=False),
            write_rounds(args.rounds, args.rows, store, delete_share=0.5),
            write_rounds(args.rounds, args.rows, store, documents=False, delete_share=0.5),
        ]
    else:
        settings = [write_rounds(args.rounds, args.rows, setting) for setting in SETTINGS]
    report = {"rows": args.rows, "settings": settings, "environment": environment(PACKAGES, load_before)}
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
