"""`amphoreus bench`: the Path Emanator benchmarks for one or more models, as a leaderboard."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from amphoreus_graph.bench.graph import BenchmarkInput
from amphoreus_graph.cli.console import console, one_line_errors, print_warning
from amphoreus_graph.cli.options import model_options
from amphoreus_graph.errors import AmphoreusError, output_path

# bench's options that are the benchmark graph's input fields (its Studio form), by option name
BENCH_OPTIONS = {name: name for name in ("scenario", "split", "judge", "seed", "seeds")}


@one_line_errors
@model_options(BenchmarkInput, BENCH_OPTIONS, into="asked")
def bench_command(
    model: Annotated[
        list[str], typer.Option("--model", help="offline | random | keywords | single-path:<Path> | a --model")
    ],
    asked: dict[str, Any],  # BENCH_OPTIONS' values by field, from the options model_options puts in its place
    tasks: Annotated[
        list[str] | None, typer.Option("--tasks", "--task", help="all, or task names (repeatable)")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for models and judge")] = None,
    out: Annotated[Path, typer.Option(help="where leaderboard.json, .md and .png go")] = Path("runs/bench"),
    items: Annotated[
        Path | None,
        typer.Option(help="your own items for one --task: JSONL (one item a line) or YAML; all of them are posed"),
    ] = None,
) -> None:
    """Score how faithfully each model lives every Path; writes a leaderboard with 95% intervals."""
    from amphoreus_graph.bench.leaderboard import benchable, cell, check_items, run_leaderboard, task_names
    from amphoreus_graph.bench.tasks.base import BenchSettings

    output_path(out, "--out", folder=True)
    scenario, split, judge, seed, seeds = (asked[k] for k in ("scenario", "split", "judge", "seed", "seeds"))
    chosen = task_names(tasks or ["all"])
    if items is not None:
        if len(chosen) != 1:
            raise AmphoreusError(f"--items {items}: expected exactly one --task for its items, got {chosen}")
        split = "all"
    benchable(scenario)
    settings = BenchSettings(
        scenario=scenario, split=split, seed=seed, seeds=seeds, judge=judge, base_url=base_url, items=items
    )
    if items is not None:
        for warning in check_items(chosen[0], items):
            print_warning(warning)
    with console.status(f"benchmarking {len(model)} model(s) on {', '.join(chosen)}…") as status:
        board = asyncio.run(
            run_leaderboard(model, chosen, settings, out, on_model=lambda m: status.update(f"{m} done…"))
        )
    table = Table(title=f"Path Emanator leaderboard ({scenario}, {split} split)")
    for column in ("model", "PES", *chosen, "fallbacks"):
        table.add_column(column)
    for row in board["models"]:
        cells = [f"{row['tasks'][t]['score']:.1f}" for t in chosen]
        pes = cell({"score": row["pes_score"], "ci": row["ci"], "reason": row.get("reason")})
        table.add_row(row["model"], pes, *cells, f"{row['fallback_rate']:.0%}")
    console.print(table)
    for task in chosen:
        if skipped := board["models"][0]["tasks"][task]["skipped"]:
            console.print(f"{task}: {len(skipped)} item(s) {scenario} cannot pose were skipped (see leaderboard.json)")
    console.print(f"written to {out}/ (leaderboard.json, leaderboard.md, leaderboard.png)")
