"""Cost that grows with the work: per-turn time as the society grows, per-round time as memory accumulates.

Workload: the shipped Brindle Green world (`fair`, the rules kit) with its villagers cloned up to N agents (each
clone keeps its original's Path, persona, start and aim; relationships and seeds left out so no name dangles), the
offline policy, the run's real Chroma memory (embedded, on disk) and its SQLite checkpoints: the data engine as a
user runs it. Each measurement runs in a fresh interpreter.

- `agents`: N = 12, 48, 120 for one cycle, in the world's six places as they are (a crowd: every event has ~N/6
  witnesses, so the records a round files grow with N²) and again with `memory.attention` set (`--attention`,
  default 3: each villager notices at most that many events a round as a bystander); per-turn time (the steady
  rounds' wall ÷ the turns in them), Chroma write calls (upsert, update, delete) per turn, and checkpoint bytes
  per round (the SQLite file at the end ÷ rounds; and the largest single checkpoint).
- `cycles`: 12 agents for C cycles (default 10); the median round wall of each cycle, so cycle C ÷ cycle 1 says
  whether accumulated memory slows a round down.

Figures depend on the machine's load: the JSON records it. The JSON goes to benchmarks/results/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks.bench_common import environment, publish  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb", "onnxruntime")
FAIR = ROOT / "amphoreus_graph" / "worlds" / "fair" / "fair.yaml"


def cloned_scenario(agents: int, folder: Path, attention: int | None = None) -> Path:
    """The fair world with its villagers cloned up to `agents` (clone k of "Name" is "Name k"), noticing
    `attention` events a round as bystanders (None: all)."""
    spec = yaml.safe_load(FAIR.read_text(encoding="utf-8"))
    originals = spec["agents"]
    clones = []
    for i in range(agents):
        base = dict(originals[i % len(originals)])
        base.pop("relationships", None)
        copy = i // len(originals)
        base["name"] = base["name"] if copy == 0 else f"{base['name']} {copy + 1}"
        clones.append(base)
    spec["agents"] = clones
    for action in spec.get("actions", []):  # the world's Python resolvers, found beside the original
        if isinstance(action, dict) and "resolver" in action:
            action["resolver"] = str(FAIR.parent / action["resolver"])
    seeds = folder / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    spec["seeds"] = str(seeds)
    spec["paths"] = None
    spec["name"] = f"fair-{agents}"
    if attention is not None:
        spec["memory"] = {"attention": attention}
    path = folder / f"fair-{agents}.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in spec.items() if v is not None}), encoding="utf-8")
    return path


class WriteCalls:
    """Counts Chroma's collection writes (every backend call that changes stored rows)."""

    def __init__(self) -> None:
        from chromadb.api.models.Collection import Collection

        self.calls: Counter[str] = Counter()
        for name in ("upsert", "update", "delete", "add"):
            original = getattr(Collection, name)

            def counted(collection: Any, *args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
                self.calls[_name] += 1
                return _original(collection, *args, **kw)

            setattr(Collection, name, counted)


def run_society(agents: int, cycles: int, attention: int | None = None) -> dict[str, Any]:
    """One offline run of the cloned fair world: round walls by cycle, turns, Chroma writes, checkpoint bytes."""
    from amphoreus_graph.contracts.events import RoundDone
    from amphoreus_graph.society.runner import RunConfig, Simulation

    writes = WriteCalls()
    with tempfile.TemporaryDirectory(prefix="amphoreus-scale-") as tmp:
        scenario = cloned_scenario(agents, Path(tmp), attention)
        out = Path(tmp) / "run"
        sim = Simulation(RunConfig(scenario=str(scenario), cycles=cycles, out=out, cache=False))
        done: list[tuple[int, float, int]] = []  # (cycle, when, turns that round)
        turns = 0

        async def run() -> None:
            nonlocal turns
            async for event in sim.stream():
                if event.type == "turn_done":
                    turns += 1
                elif event.type == "round_started":
                    turns = 0
                elif isinstance(event, RoundDone):
                    done.append((event.cycle, time.perf_counter(), turns))

        asyncio.run(run())
        checkpoint = out / "checkpoint.sqlite"
        with sqlite3.connect(checkpoint) as db:
            largest = db.execute("select max(length(checkpoint)) from checkpoints").fetchone()[0] or 0
        file_bytes = checkpoint.stat().st_size + sum(
            p.stat().st_size for p in out.glob("checkpoint.sqlite-*") if p.is_file()
        )
    walls: dict[int, list[float]] = {}
    steps: list[float] = []
    for (_, before, _), (cycle, after, n) in itertools.pairwise(done):
        walls.setdefault(cycle, []).append(after - before)
        if n:
            steps.append((after - before) / n)
    total_turns = sum(n for _, _, n in done)
    return {
        "agents": agents,
        "attention": attention,
        "cycles": cycles,
        "rounds": len(done),
        "turns": total_turns,
        "ms_per_turn": round(1000 * statistics.median(steps), 3),
        "round_wall_s_by_cycle": {c: round(statistics.median(w), 4) for c, w in sorted(walls.items())},
        "chroma_writes": dict(writes.calls),
        "chroma_writes_per_turn": round(sum(writes.calls.values()) / max(1, total_turns), 3),
        "checkpoint_bytes_per_round": int(file_bytes / max(1, len(done))),
        "largest_checkpoint_bytes": int(largest),
    }


def in_a_fresh_process(agents: int, cycles: int, attention: int | None = None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", str(agents), str(cycles), str(attention or 0)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchmarks/scale.py {agents} agents × {cycles} cycles: failed\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def table(report: dict[str, Any]) -> str:
    lines = []
    for series, heading in (("agents", "every witness notices everything"), ("attentive", "memory.attention set")):
        if not report.get(series):
            continue
        base = report[series][0]
        attention = f" = {base['attention']}" if base.get("attention") else ""
        lines.append(f"per-turn cost as the society grows (offline policy, real memory; {heading}{attention})")
        for row in report[series]:
            times = row["ms_per_turn"] / base["ms_per_turn"]
            lines.append(
                f"  {row['agents']:>4} agents  {row['ms_per_turn']:>8.2f} ms/turn ({times:.2f}×)"
                f"  Chroma writes/turn {row['chroma_writes_per_turn']:>6.2f}"
                f"  checkpoint {row['checkpoint_bytes_per_round'] / 1024:>8.1f} KB/round"
                f" (largest {row['largest_checkpoint_bytes'] / 1024:.1f} KB)"
            )
    if cycles := report.get("cycles"):
        by_cycle = cycles["round_wall_s_by_cycle"]
        first, last = by_cycle[min(by_cycle, key=int)], by_cycle[max(by_cycle, key=int)]
        lines.append(
            f"per-round wall over {cycles['cycles']} cycles ({cycles['agents']} agents): cycle 1 {first:.3f} s, "
            f"last {last:.3f} s ({last / first:.2f}×)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[12, 48, 120])
    parser.add_argument("--cycles", type=int, default=10, help="cycles of the accumulation run (0: skip it)")
    parser.add_argument(
        "--attention", type=int, default=3, help="memory.attention of the second series (0: skip that series)"
    )
    parser.add_argument("--one", type=int, nargs=3, help=argparse.SUPPRESS)  # agents, cycles, attention (0: none)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the JSON is written")
    parser.add_argument("--no-save", action="store_true", help="do not write the results file")
    args = parser.parse_args(argv)
    if args.one:
        agents, cycles, attention = args.one
        print(json.dumps(run_society(agents, cycles, attention or None)))
        return 0
    load_before = os.getloadavg()
    report: dict[str, Any] = {"agents": [in_a_fresh_process(n, 1) for n in args.agents]}
    if args.attention:
        report["attentive"] = [in_a_fresh_process(n, 1, args.attention) for n in args.agents]
    if args.cycles:
        report["cycles"] = in_a_fresh_process(args.agents[0], args.cycles)
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
