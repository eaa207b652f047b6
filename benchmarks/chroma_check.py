"""What checking an embedded Chroma store costs each time it is opened (memory/chroma_check.py), as it grows.

Builds a store of R records (unit vectors of 384 values in one cosine collection with the society's settings,
as a society's rows collection is), or measures one given with --store, then prints the median milliseconds of
SQLite's `quick_check` (what the check runs) and `integrity_check` (what it would cost to also compare each index
with its table), of the whole check, and of opening the store in a child process instead (importing chromadb,
opening it, loading every collection's index: what running Chroma's first open apart would cost). JSON goes to
benchmarks/results/chroma_check.json.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from amphoreus_graph.memory.chroma_check import check_store  # noqa: E402
from amphoreus_graph.memory.chroma_index import ROW_NEIGHBORS, open_chroma, open_collection  # noqa: E402
from benchmarks.bench_common import environment, median_ms, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "chroma_check.json"
PACKAGES = ("chromadb", "numpy")
CHILD_OPEN = """
import sys, chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
for collection in client.list_collections():
    collection.get(limit=1, include=["embeddings"])
"""


def build(directory: Path, records: int) -> None:
    """A store of `records` rows in one collection made as a society's rows collection is."""
    client, lock = open_chroma(directory)
    try:
        rows = open_collection(
            client, "am2.bench-0000000000000000.int.tailedrows", space="cosine", neighbors=ROW_NEIGHBORS
        )
        rng = np.random.default_rng(0)
        for start in range(0, records, 5000):
            vectors = rng.standard_normal((min(5000, records - start), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            ids = [f"r{i}" for i in range(start, start + len(vectors))]
            rows.upsert(ids=ids, embeddings=vectors, documents=ids)  # type: ignore[arg-type]
    finally:
        if lock is not None:
            lock.release()


def measure(directory: Path, repeats: int) -> dict[str, Any]:
    with sqlite3.connect(f"file:{directory / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        (records,) = db.execute("SELECT COUNT(*) FROM embeddings").fetchone()

        def pragma(name: str) -> None:
            db.execute(f"PRAGMA {name}").fetchall()

        quick = median_ms(lambda: pragma("quick_check(1)"), repeats)
        integrity = median_ms(lambda: pragma("integrity_check(1)"), repeats)
    whole = median_ms(lambda: check_store(directory), repeats)
    child = median_ms(lambda: subprocess.run([sys.executable, "-c", CHILD_OPEN, str(directory)], check=True), repeats)
    size = sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
    return {
        "records": records,
        "store_mb": round(size / 1e6, 1),
        "quick_check_ms": round(quick, 1),
        "integrity_check_ms": round(integrity, 1),
        "check_store_ms": round(whole, 1),
        "child_process_open_ms": round(child, 1),
    }


def table(report: dict[str, Any]) -> str:
    row = report["store"]
    return "\n".join(
        [
            f"{row['records']} records, {row['store_mb']} MB on disk (median of {report['repeats']})",
            f"  SQLite quick_check      {row['quick_check_ms']:>9} ms  (what the check runs)",
            f"  SQLite integrity_check  {row['integrity_check_ms']:>9} ms",
            f"  the whole check         {row['check_store_ms']:>9} ms  (quick_check, every segment's files)",
            f"  a child process's open  {row['child_process_open_ms']:>9} ms  (import, open, load each index)",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="records of the store built")
    parser.add_argument("--store", type=Path, help="measure this embedded store instead of building one")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="amphoreus-chroma-check-") as folder:
        directory = args.store or Path(folder)
        started = time.perf_counter()
        if args.store is None:
            build(directory, args.records)
        built_s = round(time.perf_counter() - started, 1)
        report: dict[str, Any] = {"repeats": args.repeats, "store": measure(directory, args.repeats)}
    if args.store is None:
        report["build_s"] = built_s
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
