"""The Path Emanator benchmarks' baselines: what the instrument gives a policy that knows only a shortcut.

    python benchmarks/baselines.py [--json] [--seeds 3] [--models offline,random,...] [--no-save]

Three boards, each under `--seeds` seeds with cluster+seed intervals (bench/stats.py): Path-Choice on its dev
and held-out splits, and every task on the `all` split. The rows: `offline` (reads options against the Paths'
profiles), `random` (chance), `longest` (the longest option: a reader of length alone), `keywords` (its Path's
words and nothing else), `single-path:Destruction` (the seed's one-Path model). A shortcut baseline near chance on
a task says that task cannot be gamed by that shortcut; the README's Results are generated from this file
(tools/readme_results.py).
Writes benchmarks/results/baselines.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import environment, publish

from amphoreus_graph.bench.leaderboard import bench_model, cell
from amphoreus_graph.bench.tasks.base import BenchSettings

RESULTS = Path(__file__).resolve().parent / "results" / "baselines.json"
MODELS = "offline,random,longest,keywords,single-path:Destruction"
BOARDS = {  # name: (tasks, split)
    "path_choice_dev": (["path_choice"], "dev"),
    "path_choice_heldout": (["path_choice"], "heldout"),
    "all_tasks": (["path_choice", "path_voice", "erudition", "destruction", "remembrance"], "all"),
}


def board(models: list[str], tasks: list[str], split: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    settings = BenchSettings(split=split, seed=args.seed, seeds=args.seeds)
    return [asyncio.run(bench_model(model, tasks, settings)) for model in models]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=MODELS, help="comma-separated --model values")
    parser.add_argument("--boards", default=",".join(BOARDS), help=f"some of {list(BOARDS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3, help="seeds per board (seed, seed+1, ...)")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    models = args.models.split(",")
    load_before = os.getloadavg()
    started = time.perf_counter()
    boards: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    for name in args.boards.split(","):
        tasks, split = BOARDS[name]
        began = time.perf_counter()
        rows = board(models, tasks, split, args)
        timings[name] = round(time.perf_counter() - began, 1)
        boards[name] = {
            "tasks": tasks,
            "split": split,
            "rows": [
                {
                    "model": r["model"],
                    "pes": {
                        k: v
                        for k, v in (("score", r["pes_score"]), ("ci", r["ci"]), ("reason", r.get("reason")))
                        if v is not None
                    },
                    "tasks": {
                        t: {k: r["tasks"][t][k] for k in ("score", "ci", "n", "reason") if k in r["tasks"][t]}
                        for t in tasks
                    },
                    "per_seed": r["per_seed"],
                    "fallback_rate": r["fallback_rate"],
                }
                for r in rows
            ],
        }
    report = {
        "benchmark": "baselines",
        "date": time.strftime("%Y-%m-%d"),
        "seeds": [args.seed + k for k in range(args.seeds)],
        "boards": boards,
        "timings_s": {**timings, "total": round(time.perf_counter() - started, 1)},
        "environment": environment(("amphoreus-graph", "sentence-transformers", "chromadb"), load_before),
    }
    text = "\n".join(
        f"{name} ({b['split']}):\n"
        + "\n".join(
            f"  {r['model']:<24} PES {cell(r['pes'])}  " + "  ".join(f"{t} {cell(r['tasks'][t])}" for t in b["tasks"])
            for r in b["rows"]
        )
        for name, b in boards.items()
    )
    publish(report, text, path=RESULTS, save=not args.no_save, as_json=args.json)


if __name__ == "__main__":
    main()
