"""Chroma's write cost as a store fills: why `ChromaIndex` syncs each collection's index every few writes.

The workload is a society's: C collections (one per agent), each written one row per round (a vector, a document,
a metadata row), for R rounds, into an embedded `PersistentClient`. Printed per sync threshold: the milliseconds
per write in the first and the last tenth of the rounds, and the whole run's seconds. Chroma's default (1000)
keeps its write log until every collection has synced, and each write costs more the longer that log;
`chroma_index.SYNC_THRESHOLD` is what the store uses. `--whole-log` measures each threshold again with the write log
kept whole (what a store this package opens does, for a damaged index to be rebuilt from: memory/log_rebuild.py),
and the database's size. JSON goes to benchmarks/results/chroma_writes.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
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

from amphoreus_graph.memory.chroma_index import SYNC_THRESHOLD  # noqa: E402
from amphoreus_graph.memory.log_rebuild import keep_whole_log  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "chroma_writes.json"
PACKAGES = ("chromadb",)


def write_rounds(collections: int, rounds: int, sync_threshold: int | None, whole_log: bool) -> dict[str, Any]:
    """Milliseconds of each write, in order, for one threshold (None: Chroma's default), with Chroma purging its
    write log or (`whole_log`) keeping it whole, as the package's own stores do (memory/log_rebuild.py)."""
    hnsw = CreateHNSWConfiguration(space="cosine")
    if sync_threshold is not None:
        hnsw["sync_threshold"] = sync_threshold
    rng = np.random.default_rng(0)
    walls: list[float] = []
    with tempfile.TemporaryDirectory(prefix="amphoreus-chroma-writes-") as folder:
        client = chromadb.PersistentClient(path=folder, settings=Settings(anonymized_telemetry=False))
        made = [
            client.create_collection(f"agent-{i:03d}", configuration=CreateCollectionConfiguration(hnsw=hnsw))
            for i in range(collections)
        ]
        if whole_log:
            keep_whole_log(Path(folder))
        for round_ in range(rounds):
            for i, collection in enumerate(made):
                vector = rng.standard_normal(384).tolist()
                started = time.perf_counter()
                collection.upsert(
                    ids=[f"r{round_}-{i}"],
                    embeddings=[vector],
                    documents=[f"round {round_}: agent {i} saw the gate fall and the tide come in"],
                    metadatas=[{"records": "x" * 200, "round": round_}],
                )
                walls.append(time.perf_counter() - started)
        database_mb = (Path(folder) / "chroma.sqlite3").stat().st_size / 1e6
    tenth = max(1, len(walls) // 10)
    return {
        "sync_threshold": sync_threshold or "default (1000)",
        "log": "whole" if whole_log else "purged",
        "first_tenth_ms": round(1000 * statistics.median(walls[:tenth]), 2),
        "last_tenth_ms": round(1000 * statistics.median(walls[-tenth:]), 2),
        "total_s": round(sum(walls), 1),
        "database_mb": round(database_mb, 1),
    }


def table(report: dict[str, Any]) -> str:
    lines = [f"{report['collections']} collections x {report['rounds']} rounds, one row per write"]
    lines.append(
        f"{'sync threshold':>16} {'log':>7} {'ms/write first 10%':>19} {'last 10%':>9} {'total s':>8} {'db MB':>6}"
    )
    for row in report["thresholds"]:
        lines.append(
            f"{row['sync_threshold']!s:>16} {row['log']:>7} {row['first_tenth_ms']:>19} {row['last_tenth_ms']:>9} "
            f"{row['total_s']:>8} {row['database_mb']:>6}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--thresholds", type=int, nargs="+", default=[0, 100, SYNC_THRESHOLD], help="0: default")
    parser.add_argument("--whole-log", action="store_true", help="each threshold again with the write log kept whole")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    logs = (False, True) if args.whole_log else (False,)
    rows = [write_rounds(args.collections, args.rounds, t or None, whole) for t in args.thresholds for whole in logs]
    report = {"collections": args.collections, "rounds": args.rounds, "thresholds": rows}
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
