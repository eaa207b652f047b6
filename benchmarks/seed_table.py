"""The seed's comparison on the Path Emanator benchmarks, on this CPU or on a GPU in one command.

    python benchmarks/seed_table.py [--out DIR] [--data DIR] [--device cpu|cuda] [--dtype fp32|bf16]
        [--data-only | --record-only] [--json] [--steps 150] [--dpo-steps 20] [--rounds 8] [--base tiny] [--lr LR]

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

Phases: societies a and b (made here, or read from `--data`), judge b, pretrain a and b, DPO c, then per row:
record (the model answers every benchmark turn; its decisions go to DIR/decisions/) and score (the recorded
decisions, replayed through the benchmark with its judge). Every phase's result is saved in DIR/phases.json as it
ends; a rerun with the same `--out` reuses the phases done (the report lists them) and refuses other settings.
`--record-only` stops before scoring: the machine needs only torch and transformers; copy DIR to a machine with
the judge and rerun the same command there without `--record-only` to score. With `--out` everything goes under
DIR; without it the scratch is a temporary folder and the table goes to benchmarks/results/seed_table.{json,md,png}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import environment, publish

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.bench.leaderboard import bench_model, cell, markdown, plot, task_names
from amphoreus_graph.bench.replay import RecordingPolicy, ReplayPolicy, record_decisions, write_record
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.train import DpoSettings, PretrainConfig, pretrain, read_dpo_pairs, read_sft_rows, train_dpo
from amphoreus_graph.train.configs import default_lr
from amphoreus_graph.train.policy import DTYPES, load_pes_policy

RESULTS = Path(__file__).with_name("results")
BASELINES = ("random", "longest", "keywords")
ROWS = {  # short: they label the plot's groups
    "a": "(a) single-Path data",
    "b": "(b) multi-agent data",
    "c": "(c) (b) + DPO",
}
# settings that change no figure: where it ran and what is printed or saved; every other one must match on resume
UNCOMPARED = ("out", "data", "data_only", "device", "record_only", "json", "no_save")


def society(out: Path, policy: str, args: argparse.Namespace) -> dict[str, Any]:
    """A society run (memory off: the comparison is about the decisions, and it keeps the table quick) and its
    SFT export. Imported here: only this phase and the judge's need the society's services (LangGraph, Chroma)."""
    from amphoreus_graph.data.export import export_sft
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society.runner import RunConfig, Simulation

    config = RunConfig(scenario=args.scenario, cycles=args.cycles, rounds=args.rounds, seed=args.seed, out=out)
    asyncio.run(Simulation(config, policy=resolve_model(policy), memory=NullMemory()).run())
    export_sft([out], out / "sft")
    return {"rows": len(read_sft_rows([out / "sft"]))}


def judged(run: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Expert pairs from (b)'s society: every turn by default (a sample is keyed on the run's scratch path, so it
    would differ from one invocation to the next)."""
    from amphoreus_graph.data.experts import build_experts_graph

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
    return {"pairs": len(read_dpo_pairs([run / "judged"]))}


class Ledger:
    """DIR/phases.json: the settings of the run in DIR and each finished phase's result, saved as it ends."""

    def __init__(self, root: Path, settings: dict[str, Any]) -> None:
        self.file = root / "phases.json"
        self.reused: list[str] = []
        self.timings: dict[str, float] = {}
        compared = {k: v for k, v in settings.items() if k not in UNCOMPARED}
        saved = json.loads(self.file.read_text(encoding="utf-8")) if self.file.is_file() else None
        if saved is not None and saved["settings"] != compared:
            was = saved["settings"]
            keys = sorted(was.keys() | compared.keys())
            differ = [
                f"{k} {was.get(k)!r} there, {compared.get(k)!r} now" for k in keys if was.get(k) != compared.get(k)
            ]
            raise AmphoreusError(
                f"--out {root}: holds a run with other settings ({'; '.join(differ)}); "
                "rerun with those or choose another --out"
            )
        self.state: dict[str, Any] = saved or {"settings": compared, "done": {}}

    def done(self, phase: str) -> bool:
        return phase in self.state["done"]

    def run(self, phase: str, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The phase's saved result, or run it and save its result."""
        if self.done(phase):
            self.reused.append(phase)
            return dict(self.state["done"][phase]["result"])
        began = time.perf_counter()
        result = fn()
        seconds = round(time.perf_counter() - began, 2)
        self.timings[phase] = seconds
        self.state["done"][phase] = {"result": result, "seconds": seconds}
        write_atomic(self.file, json.dumps(self.state, indent=2) + "\n")
        return result


COUNTS = ("decisions", "scored_choices")


def mean_decoding(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The decoding figures of one row over its seeds' models: decisions summed, rates averaged."""
    return {
        key: sum(s[key] for s in summaries)
        if key == "decisions"
        else round(sum(s[key] for s in summaries) / len(summaries), 4)
        for key in summaries[0]
    }


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


def data_folders(args: argparse.Namespace, root: Path) -> Path:
    """Where the societies are: `--data` (a folder holding single/ and multi/, or an earlier `--out` whose data/
    does), checked whole before anything runs, else DIR/data, made on demand."""
    if args.data is None:
        return root / "data"
    given = Path(args.data)
    base = given / "data" if (given / "data").is_dir() else given
    needed = [base / "single" / "sft", base / "multi" / "sft", base / "multi" / "judged" / "dpo.jsonl"]
    missing = [str(p.relative_to(base)) for p in needed if not p.exists()]
    if missing:
        raise AmphoreusError(
            f"--data {given}: lacks {', '.join(missing)}; expected an earlier --out folder "
            "(or one holding single/sft, multi/sft and multi/judged)"
        )
    return base


def seed_table(args: argparse.Namespace, root: Path, ledger: Ledger, tasks: list[str]) -> dict[str, Any] | None:
    """Every phase not done yet, in order; the report's rows and training figures (None with --data-only or
    --record-only)."""
    data = data_folders(args, root)

    @cache
    def rows(key: str) -> list[Any]:
        folder, policy = {"a": ("single", f"single-path:{args.single_path}"), "b": ("multi", "offline")}[key]
        if args.data is None:
            ledger.run(f"society_{key}", lambda: society(data / folder, policy, args))
        return read_sft_rows([data / folder / "sft"])

    def pairs() -> Path:
        if args.data is None:
            ledger.run("judge_b", lambda: judged(data / "multi", args))
        return data / "multi" / "judged"

    if args.data_only:
        for key in ("a", "b"):
            rows(key)
        pairs()
        return None

    seeds = [args.seed + k for k in range(args.seeds)]

    def trained(key: str, seed: int) -> dict[str, Any]:
        same = min(len(rows("a")), len(rows("b")))
        config = PretrainConfig(
            base=args.base, steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=seed
        ).model_copy(update={"device": args.device, "save_every": args.steps})
        metrics = pretrain(rows(key)[:same], root / f"ckpt-{key}-s{seed}", config)
        return {**metrics.model_dump(mode="json"), "society_rows": len(rows(key))}

    def tuned(seed: int) -> dict[str, Any]:
        dpo = DpoSettings(steps=args.dpo_steps, seed=seed, device=args.device)
        return train_dpo(pairs(), root / f"ckpt-b-s{seed}", root / f"ckpt-c-s{seed}", dpo).model_dump(mode="json")

    settings = BenchSettings(scenario=args.scenario, split=args.split, seed=args.seed, judge=args.judge)

    def record(key: str, seed: int) -> dict[str, Any]:
        policy = load_pes_policy(
            str(root / f"ckpt-{key}-s{seed}"),
            max_field_tokens=args.max_field_tokens,
            device=args.device,
            dtype=args.dtype,
        )
        recording = RecordingPolicy(policy)
        asyncio.run(record_decisions(recording, tasks, settings.model_copy(update={"seed": seed})))
        written = write_record(recording, root / "decisions" / f"{key}-s{seed}.jsonl")
        return {"decisions": written, "decoding": policy.stats.summary(), "device": str(policy.model.device)}

    a, b, c, recorded = {}, {}, {}, {}
    for seed in seeds:  # a whole seed at a time: a cut run keeps every seed it finished
        a[seed] = ledger.run(f"pretrain_a_s{seed}", lambda seed=seed: trained("a", seed))
        b[seed] = ledger.run(f"pretrain_b_s{seed}", lambda seed=seed: trained("b", seed))
        c[seed] = ledger.run(f"dpo_c_s{seed}", lambda seed=seed: tuned(seed))
        for key in ROWS:
            recorded[key, seed] = ledger.run(f"record_{key}_s{seed}", lambda key=key, seed=seed: record(key, seed))
    if args.record_only:
        return None

    def score(key: str) -> dict[str, Any]:
        """The row's recorded decisions under every seed, each seed's model answering that seed's items."""
        replays = {seed: ReplayPolicy(root / "decisions" / f"{key}-s{seed}.jsonl", name=ROWS[key]) for seed in seeds}
        return asyncio.run(bench_model(replays, tasks, settings))

    rows_out = [
        {
            **ledger.run(f"score_{key}", lambda key=key: score(key)),
            "model": ROWS[key],
            "decoding": mean_decoding([recorded[key, seed]["decoding"] for seed in seeds]),
        }
        for key in ROWS
    ]
    baseline = settings.model_copy(update={"seeds": args.seeds})  # the same items, seeds and judge as the rows

    def shortcut(name: str) -> dict[str, Any]:
        return asyncio.run(bench_model(name, tasks, baseline))

    shortcuts = [
        {**ledger.run(f"baseline_{name}", lambda name=name: shortcut(name)), "model": name} for name in BASELINES
    ]
    first = seeds[0]
    training = {
        "seeds": seeds,
        "pretrain_examples": {"a": a[first]["examples"], "b": b[first]["examples"]},
        "society_rows": {"a": a[first]["society_rows"], "b": b[first]["society_rows"]},
        "pretrain_loss_first_last": {
            f"{k}_s{seed}": [m[seed]["loss_first"], m[seed]["loss_last"]]
            for k, m in (("a", a), ("b", b))
            for seed in seeds
        },
        "tokens_per_s": {"a": a[first]["tokens_per_s"], "b": b[first]["tokens_per_s"]},
        "parameters": a[first]["parameters"],
        "lr": args.lr,
        "dpo_heldout_reward_margin_before_after": {
            f"s{seed}": [c[seed]["before"]["reward_margin"], c[seed]["after"]["reward_margin"]] for seed in seeds
        },
        "dpo_pairs": {"train": c[first]["train_pairs"], "heldout": c[first]["heldout_pairs"]},
        "train_device": a[first]["device"],
        "decode_device": recorded["a", first]["device"],
        "decode_dtype": args.dtype,
    }
    return {"rows": rows_out, "baselines": shortcuts, "training": training, "settings": settings}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", help="every phase's output, the decisions and the table go here (resumable)")
    parser.add_argument("--data", help="reuse the societies and judged pairs of an earlier --out (no society runs)")
    parser.add_argument("--scenario", default="amphoreus", help="the world of the societies and of the bench items")
    parser.add_argument("--cycles", type=int, default=1, help="cycles of the societies that make the data")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per cycle of those societies")
    parser.add_argument("--single-path", default="Destruction", help="the one Path of row (a)")
    parser.add_argument("--base", default="tiny", help="tiny | small | a local checkpoint")
    parser.add_argument("--lr", type=float, help="pre-training peak learning rate (default: the base's own)")
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
    parser.add_argument("--judge", default="offline", help="who hears the Path in free speech when scoring")
    parser.add_argument("--max-field-tokens", type=int, default=64, help="cap on the speech and on the rationale")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--seeds", type=int, default=1, help="train and bench every row under this many seeds (seed, seed+1, ...)"
    )
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (training and decoding)")
    parser.add_argument("--dtype", default="fp32", choices=DTYPES, help="decoding dtype, the same on every device")
    parser.add_argument("--data-only", action="store_true", help="stop after the societies and the judge")
    parser.add_argument("--record-only", action="store_true", help="stop after recording the decisions (no judge)")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--no-save", action="store_true", help="without --out: write nothing to benchmarks/results")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds {args.seeds}: expected at least 1")
    args.lr = args.lr or default_lr(args.base)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="seed-table-") as scratch:
        root = Path(args.out) if args.out else Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        try:
            tasks = task_names(args.tasks.split(","))
            ledger = Ledger(root, vars(args))
            made = seed_table(args, root, ledger, tasks)
        except AmphoreusError as exc:
            sys.exit(f"seed_table: {exc}")
    if made is None and args.data_only:
        print(f"the societies and judged pairs are in {root / 'data'}; train elsewhere with --data {root}")
        return
    if made is None:
        print(
            f"recorded the decisions in {root / 'decisions'}; score them where the judge runs with the same "
            f"command without --record-only (--out {root})"
        )
        return
    rows, settings = made["rows"], made["settings"]
    board = {"models": rows + made["baselines"], "tasks": tasks, "settings": settings.model_dump()}

    def entry(r: dict[str, Any]) -> dict[str, Any]:
        return {
            "row": r["model"],
            "pes_score": r["pes_score"],
            "ci": r["ci"],
            **({"reason": r["reason"]} if "reason" in r else {}),
            "per_seed": r["per_seed"],
            "fallback_rate": r["fallback_rate"],
            "tasks": {t: {k: r["tasks"][t][k] for k in ("score", "ci", "reason") if k in r["tasks"][t]} for t in tasks},
        }

    report = {
        "benchmark": "seed_table",
        "baselines": [entry(r) for r in made["baselines"]],
        "rows": [{**entry(r), "decoding": r["decoding"]} for r in rows],
        "training": made["training"],
        "settings": {k: v for k, v in vars(args).items() if k not in ("json", "no_save")},
        "reused_phases": ledger.reused,
        "timings_s": {**ledger.timings, "total": round(time.perf_counter() - started, 2)},
        "environment": environment(("amphoreus-graph", "torch", "transformers", "trl"), load_before),
    }
    results = root if args.out else RESULTS
    save = bool(args.out) or not args.no_save
    if save:
        results.mkdir(exist_ok=True)
        (results / "seed_table.md").write_text(markdown(board) + decoding_table(rows), encoding="utf-8")
        plot(board, results / "seed_table.png")
    table = "\n".join(
        f"{r['row']:<22} PES {cell({'score': r['pes_score'], 'ci': r['ci'], 'reason': r.get('reason')})}  "
        + "  ".join(f"{t} {cell(r['tasks'][t])}" for t in tasks)
        + (f"  action mass {r['decoding']['action_mass']:.2f}" if "decoding" in r else "  (baseline)")
        for r in report["rows"] + report["baselines"]
    )
    publish(report, table, path=results / "seed_table.json", save=save, as_json=args.json)


if __name__ == "__main__":
    main()
