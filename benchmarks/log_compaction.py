"""What the compacted write log keeps: a store's log and database size over many cycles, and what compaction costs.

The workload is a society's memory as `ChromaIndex` writes it: A agents, each filing K rows a round (a vector, a
document, metadata) for R rounds a cycle; at each cycle's end half of every agent's rows are forgotten (deleted)
and the rest have their metadata updated (retention's decay). Each cycle is one process's life: the store is
opened (where `compact_log` runs), written, and closed. Printed per cycle: the write log's rows and the rows
live, the database's MB, and the compaction's seconds at that open; then the same with compaction off (the log
kept whole, as before). JSON goes to benchmarks/results/log_compaction.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from amphoreus_graph.memory import chroma_index  # noqa: E402
from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma  # noqa: E402
from amphoreus_graph.memory.index import RowChanges, Rows  # noqa: E402
from amphoreus_graph.memory.log_rebuild import DATABASE, compact_log, logged_writes  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "log_compaction.json"
PACKAGES = ("chromadb",)


def run_cycles(agents: int, rows: int, rounds: int, cycles: int, compact: bool) -> list[dict[str, Any]]:
    """One cycle a process life (open, write, close); the figures of each open."""
    rng = np.random.default_rng(0)
    held: dict[str, list[str]] = {f"agent-{a:04d}": [] for a in range(agents)}
    timed: list[float] = []

    def timed_compaction(directory: Path) -> int:
        started = time.perf_counter()
        removed = compact_log(directory) if compact else 0
        timed.append(time.perf_counter() - started)
        return removed

    original: Callable[[Path], int] = chroma_index.compact_log
    chroma_index.compact_log = timed_compaction  # the open's own call, timed (or skipped)
    out = []
    try:
        with tempfile.TemporaryDirectory(prefix="amphoreus-log-compaction-") as name:
            folder = Path(name)
            for cycle in range(cycles):
                client, lock = open_chroma(folder)
                index = ChromaIndex(client, "bench", lock)
                if cycle:
                    out.append(_figures(folder, cycle, held, timed[-1]))
                for round_ in range(rounds):
                    changes = []
                    for owner, ids in held.items():
                        new = [f"c{cycle}-r{round_}-{k}" for k in range(rows)]
                        vectors = rng.standard_normal((rows, 384)).astype(np.float32)
                        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                        texts = [f"{owner} saw the tide in cycle {cycle}, round {round_} ({k})" for k in range(rows)]
                        metadatas = [{"importance": "5", "cycle": str(cycle)} for _ in new]
                        changes.append(RowChanges(owner, written=Rows(new, texts, metadatas, vectors.tolist())))
                        ids.extend(new)
                    index.write(changes)
                changes = []
                for owner, ids in held.items():  # the reset: half forgotten, the rest decayed
                    forgotten, kept = ids[::2], ids[1::2]
                    decayed = Rows(kept, metadatas=[{"importance": "2", "cycle": str(cycle)} for _ in kept])
                    changes.append(RowChanges(owner, deleted=forgotten, updated=decayed))
                    held[owner] = kept
                index.write(changes)
                index.close()
            client, lock = open_chroma(folder)
            out.append(_figures(folder, cycles, held, timed[-1]))
            ChromaIndex(client, "bench", lock).close()
    finally:
        chroma_index.compact_log = original
    return out


def _figures(folder: Path, cycle: int, held: dict[str, list[str]], compaction_s: float) -> dict[str, Any]:
    return {
        "after_cycle": cycle,
        "log_rows": logged_writes(folder),
        "live_rows": sum(len(ids) for ids in held.values()),
        "database_mb": round((folder / DATABASE).stat().st_size / 1e6, 1),
        "compaction_s": round(compaction_s, 3),
    }


def table(report: dict[str, Any]) -> str:
    shape = report["workload"]
    lines = [
        f"{shape['agents']} agents x {shape['rows']} rows a round x {shape['rounds']} rounds a cycle, half forgotten "
        "at each reset; one process a cycle"
    ]
    lines.append(f"{'log':<10} {'after cycle':>11} {'log rows':>9} {'live rows':>9} {'DB MB':>7} {'compact s':>9}")
    for mode in ("compacted", "whole"):
        for row in report[mode]:
            lines.append(
                f"{mode:<10} {row['after_cycle']:>11} {row['log_rows']:>9} {row['live_rows']:>9} "
                f"{row['database_mb']:>7} {row['compaction_s']:>9}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--rows", type=int, default=4, help="rows an agent files a round")
    parser.add_argument("--rounds", type=int, default=6, help="rounds a cycle")
    parser.add_argument("--cycles", type=int, default=6)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    shape = (args.agents, args.rows, args.rounds, args.cycles)
    load_before = os.getloadavg()
    report: dict[str, Any] = {
        "workload": {"agents": args.agents, "rows": args.rows, "rounds": args.rounds, "cycles": args.cycles},
        "compacted": run_cycles(*shape, compact=True),
        "whole": run_cycles(*shape, compact=False),
        "environment": environment(PACKAGES, load_before),
    }
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
