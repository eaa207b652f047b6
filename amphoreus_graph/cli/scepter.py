"""What `amphoreus simulate --societies N` shows: a rich progress view while it runs, a summary table after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from amphoreus_graph.cli.console import follow
from amphoreus_graph.contracts.events import ProgressEvent
from amphoreus_graph.layout import RunDir
from amphoreus_graph.scepter.runner import Scepter

SHOWN_SOCIETIES = 20


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


async def drive(scepter: Scepter, *, resume: bool, quiet: bool, console: Console) -> dict[str, Any]:
    """Run the Scepter with two bars (societies; planned rounds with samples, samples/s and ETA)."""
    plan = scepter.plan
    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
    )
    with Progress(*columns, console=console, disable=quiet, transient=False) as progress:
        total = scepter.total_positions()
        societies = progress.add_task("societies", total=plan.societies, info=f"engine {plan.engine}")
        rounds = progress.add_task("rounds", total=total, info="")

        def show(_: ProgressEvent) -> None:
            snap = scepter.tracker.snapshot()  # the Scepter keeps it up to date with every event
            progress.update(societies, completed=snap["societies_done"])
            progress.update(
                rounds,
                completed=min(snap["position"], total),
                info=f"{snap['samples']} samples · {snap['samples_per_s']:.1f}/s · ETA {_clock(snap['eta_s'])}",
            )

        return await follow(scepter.stream(resume=resume), show)


def print_summary(summary: dict[str, Any], out: Path, console: Console) -> None:
    rows = summary["per_society"]
    table = Table(title=f"Scepter {summary['run']} — {summary['societies']} societies on {summary['engine']}")
    for column in ("Society", "World", "Seed", "Samples", "Outcomes", "Fallbacks"):
        table.add_column(column)
    for row in rows[:SHOWN_SOCIETIES]:
        table.add_row(
            row["society"],
            row.get("world") or Path(row["scenario"]).stem,
            str(row["seed"]),
            str(row["samples_written"]),
            ", ".join(row["outcomes"]),
            str(row["fallbacks"]),
        )
    if len(rows) > SHOWN_SOCIETIES:
        table.add_row(f"… {len(rows) - SHOWN_SOCIETIES} more", "", "", "", "", "")
    console.print(table)
    files = RunDir(out)
    console.print(
        f"samples {summary['samples_written']} · {summary['samples_per_s']:.1f} samples/s · "
        f"model calls {summary['model_calls']} · failures {summary['failures']} · fallbacks {summary['fallbacks']} · "
        f"{summary['wall_time_s']:.1f}s\n"
        f"written to {out}/ ({files.summary.name}, {files.samples.name}/ merged and checked, "
        f"{files.societies.name}/NAME/ each resumable)",
        highlight=False,
    )
