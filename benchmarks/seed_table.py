"""The seed's comparison on the Path Emanator benchmarks, at a size this CPU can run.

    python benchmarks/seed_table.py [--json] [--steps 150] [--dpo-steps 20] [--rounds 8] [--base tiny]

Three PES models, each pre-trained on the same number of rows (the first rows of each export, as many as the
smaller one holds: in a world where agents can fall, those who walk only one Path may leave the game sooner) for the
same number of steps:
  (a) single-Path generated data: a society where every agent decides as one Path (`single-path:<Path>`),
  (b) multi-agent interaction data: the same society with each agent on its own Path (the offline policy),
  (c) (b) then DPO on expert-judged pairs from (b)'s society (the DPO steps are extra).
Each is benchmarked as `pes:CKPT` on the chosen tasks, posed in the societies' world (`--scenario`, any world).
Constrained decoding makes every reply a Decision (a fault would fall back and score as a silent first option:
`fallback_rate`); each row also reports how willingly the model chose: the probability it gave the offered actions
(`action_mass`) and how often greedy free decoding would have written the chosen action and target
(`top_choice_rate`).
Writes benchmarks/results/seed_table.{json,md,png}.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import environment, publish

from amphoreus_graph.bench.leaderboard import bench_model, markdown, plot
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.data.experts import build_experts_graph
from amphoreus_graph.data.export import export_sft
from amphoreus_graph.memory.store import NullMemory
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.train import DpoSettings, PretrainConfig, pretrain, read_sft_rows, train_dpo
from amphoreus_graph.train.policy import load_pes_policy

RESULTS = Path(__file__).with_name("results")
ROWS = {  # short: they label the plot's groups
    "a": "(a) single-Path data",
    "b": "(b) multi-agent data",
    "c": "(c) (b) + DPO",
}


def society(out: Path, policy: str, args: argparse.Namespace) -> Path:
    """A society run (memory off: the comparison is about the decisions, and it keeps the table quick)."""
    config = RunConfig(scenario=args.scenario, cycles=args.cycles, rounds=args.rounds, seed=args.seed, out=out)
    asyncio.run(Simulation(config, policy=resolve_model(policy), memory=NullMemory()).run())
    export_sft([out], out / "sft")
    return out


def judged(run: Path, args: argparse.Namespace) -> Path:
    """Expert pairs from (b)'s society: every turn by default (a sample is keyed on the run's scratch path, so it
    would differ from one invocation to the next)."""
    turns = args.judge_turns or sum(1 for shard in (run / "samples").glob("*.jsonl") for _ in shard.open())
    request = {
        "run_dir": str(run),
        "out_dir": str(run / "judged"),
        "max_turns": turns,
        "alternatives": args.alternatives,
        "seed": args.seed,
        "balance_acts": not args.keep_act_imbalance,
    }
    asyncio.run(build_experts_graph().compile().ainvoke(request))
    return run / "judged"


def decoding_table(rows: list[dict[str, Any]]) -> str:
    """How willingly each model chose under constrained decoding (see `amphoreus_graph.train.policy.DecodeStats`)."""
    lines = [
        "",
        "## Constrained decoding",
        "",
        "| Model | decisions | offered-action mass | greedy free choice agrees | free text closed |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        d = r["decoding"]
        lines.append(
            f"| {r['model']} | {d['decisions']} | {d['action_mass']:.2f} | {d['top_choice_rate']:.0%} | "
            f"{d['closed_rate']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="amphoreus", help="the world of the societies and of the bench items")
    parser.add_argument("--cycles", type=int, default=1, help="cycles of the societies that make the data")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per cycle of those societies")
    parser.add_argument("--single-path", default="Destruction", help="the one Path of row (a)")
    parser.add_argument("--base", default="tiny", help="tiny | small | a local checkpoint")
    parser.add_argument("--steps", type=int, default=150, help="pre-training steps, the same for every row")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--dpo-steps", type=int, default=20)
    parser.add_argument("--judge-turns", type=int, default=0, help="judge a sample of this many turns (0: all)")
    parser.add_argument(
        "--alternatives", type=int, default=8, help="alternatives per judged turn (more keep more act-balanced pairs)"
    )
    parser.add_argument(
        "--keep-act-imbalance", action="store_true", help="DPO on every judged pair, not only act-balanced ones"
    )
    parser.add_argument("--tasks", default="path_choice,path_voice")
    parser.add_argument("--split", default="heldout")
    parser.add_argument("--max-field-tokens", type=int, default=64, help="cap on the speech and on the rationale")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def timed(label: str, fn: Any, *fn_args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        value = fn(*fn_args, **kwargs)
        timings[label] = round(time.perf_counter() - began, 2)
        return value

    with tempfile.TemporaryDirectory(prefix="seed-table-") as scratch:
        root = Path(scratch)
        single = timed("society_a", society, root / "single", f"single-path:{args.single_path}", args)
        multi = timed("society_b", society, root / "multi", "offline", args)
        pairs = timed("judge_b", judged, multi, args)
        config = PretrainConfig(base=args.base, steps=args.steps, batch_size=args.batch_size, seed=args.seed)
        config = config.model_copy(update={"device": args.device, "save_every": args.steps})
        data_a, data_b = read_sft_rows([single / "sft"]), read_sft_rows([multi / "sft"])
        same = min(len(data_a), len(data_b))
        a = timed("pretrain_a", pretrain, data_a[:same], root / "ckpt-a", config)
        b = timed("pretrain_b", pretrain, data_b[:same], root / "ckpt-b", config)
        dpo = DpoSettings(steps=args.dpo_steps, seed=args.seed, device=args.device)
        c = timed("dpo_c", train_dpo, pairs, root / "ckpt-b", root / "ckpt-c", dpo)
        tasks = args.tasks.split(",")
        settings = BenchSettings(scenario=args.scenario, split=args.split, seed=args.seed)
        rows = []
        for key in ROWS:
            policy = load_pes_policy(str(root / f"ckpt-{key}"), max_field_tokens=args.max_field_tokens)
            row = timed(f"bench_{key}", asyncio.run, bench_model(policy, tasks, settings))
            rows.append({**row, "model": ROWS[key], "decoding": policy.stats.summary()})
    board = {"models": rows, "tasks": tasks, "settings": settings.model_dump()}
    report = {
        "benchmark": "seed_table",
        "rows": [
            {
                "row": r["model"],
                "pes_score": r["pes_score"],
                "ci": r["ci"],
                "fallback_rate": r["fallback_rate"],
                "tasks": {t: {"score": r["tasks"][t]["score"], "ci": r["tasks"][t]["ci"]} for t in tasks},
                "decoding": r["decoding"],
            }
            for r in rows
        ],
        "training": {
            "pretrain_examples": {"a": a.examples, "b": b.examples},
            "society_rows": {"a": len(data_a), "b": len(data_b)},
            "pretrain_loss_first_last": {k: [m.loss_first, m.loss_last] for k, m in (("a", a), ("b", b))},
            "tokens_per_s": {"a": a.tokens_per_s, "b": b.tokens_per_s},
            "parameters": a.parameters,
            "dpo_heldout_reward_margin_before_after": [c.before.reward_margin, c.after.reward_margin],
            "dpo_pairs": {"train": c.train_pairs, "heldout": c.heldout_pairs},
            "device": a.device,
        },
        "settings": {k: v for k, v in vars(args).items() if k not in ("json", "no_save")},
        "timings_s": {**timings, "total": round(time.perf_counter() - started, 2)},
        "environment": environment(("amphoreus-graph", "torch", "transformers", "trl"), load_before),
    }
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "seed_table.md").write_text(markdown(board) + decoding_table(rows), encoding="utf-8")
        plot(board, RESULTS / "seed_table.png")
    table = "\n".join(
        f"{r['row']:<22} PES {r['pes_score']:5.1f} [{r['ci'][0]:.1f}, {r['ci'][1]:.1f}]  "
        + "  ".join(f"{t} {r['tasks'][t]['score']:5.1f}" for t in tasks)
        + f"  fallbacks {r['fallback_rate']:.0%}  action mass {r['decoding']['action_mass']:.2f}"
        for r in report["rows"]
    )
    publish(report, table, path=RESULTS / "seed_table.json", save=not args.no_save, as_json=args.json)


if __name__ == "__main__":
    main()
