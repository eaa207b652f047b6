"""How fast a run's checkpoint file grows, per round and per turn, as the society grows.

Workload: benchmarks/scale.py's cloned fair world (the shipped villagers cloned up to N agents, `memory.attention`
3 by default), the offline policy, real memory, one cycle of a few rounds. As each round is recorded the
checkpoint's size is read as SQLite holds it (pages in use, write-ahead log included: what the file is once
checkpointed); the growth per round and per turn is taken over the steady rounds, between the first round's and
the last's (the first also holds the run's setup, the last the cycle's end). Read while the run writes behind,
a size can miss a step's writes still in flight (a few KB, more on a loaded machine); the size at the end has
every write. Target (issue 37): growth linear in the round's turns, at most 5 KB a turn.

The JSON goes to benchmarks/results/checkpoint_growth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks.bench_common import environment, publish, results_options  # noqa: E402
from benchmarks.scale import cloned_scenario  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "checkpoint_growth.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite")


def held_bytes(path: Path) -> int:
    """The checkpoint's size as SQLite holds it now: its pages in use, the write-ahead log's committed frames
    included (a reader sees them), the log's reused space not."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
    return int(pages * size)


def growth(agents: int, rounds: int, attention: int | None = 3) -> dict[str, Any]:
    """One offline run of the cloned fair world (at least 3 rounds): the checkpoint's size as each round is
    recorded and at the end, and its growth per round and per turn over the steady rounds."""
    from amphoreus_graph.society.runner import RunConfig, Simulation

    with tempfile.TemporaryDirectory(prefix="amphoreus-ckpt-") as tmp:
        scenario = cloned_scenario(agents, Path(tmp), attention)
        out = Path(tmp) / "run"
        config = RunConfig(scenario=str(scenario), cycles=1, rounds=rounds, out=out, cache=False)
        sim = Simulation(config)
        sizes: list[int] = []
        turns: list[int] = []

        async def run() -> None:
            async for event in sim.stream():
                if event.type == "round_started":
                    turns.append(0)
                elif event.type == "turn_done":
                    turns[-1] += 1
                elif event.type == "round_done":
                    sizes.append(held_bytes(config.files.checkpoint))

        asyncio.run(run())
        final = held_bytes(config.files.checkpoint)
    steady = len(sizes) - 2  # the rounds recorded after the first, up to the last
    grown = sizes[-2] - sizes[0]
    return {
        "agents": agents,
        "attention": attention,
        "rounds": len(sizes),
        "turns_by_round": turns,
        "bytes_as_round_recorded": sizes,
        "bytes_at_end": final,
        "bytes_per_round": round(grown / max(1, steady)),
        "bytes_per_turn": round(grown / max(1, sum(turns[1:-1]))),
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["checkpoint growth over the steady rounds (cloned fair world, offline policy, real memory)"]
    for row in rows:
        lines.append(
            f"  {row['agents']:>5} agents  {row['bytes_per_round'] / 1024:>9.1f} KB/round"
            f"  {row['bytes_per_turn'] / 1024:>6.2f} KB/turn  (file {row['bytes_at_end'] / 1024:.0f} KB"
            f" after {row['rounds']} rounds)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[12, 48, 120])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of the one cycle run (at least 3)")
    parser.add_argument("--attention", type=int, default=3, help="memory.attention (0: every witness notices all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if args.rounds < 3:
        parser.error("--rounds: expected at least 3 (growth is taken between the first round and the last)")
    load_before = os.getloadavg()
    rows = [growth(n, args.rounds, args.attention or None) for n in args.agents]
    report = {"growth": rows, "environment": environment(PACKAGES, load_before)}
    publish(report, table(rows), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
