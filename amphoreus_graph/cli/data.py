"""The data-engine commands: `amphoreus judge` and `amphoreus export sft|dpo`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from amphoreus_graph.cli.console import SkipBadRows, bad_rows, console, one_line_errors
from amphoreus_graph.cli.options import model_options
from amphoreus_graph.data.experts_input import ExpertsInput
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir

BalanceActs = Annotated[
    bool,
    typer.Option(
        "--balance-acts/--keep-act-imbalance",
        help="keep pairs so that every action is chosen as often as it is rejected (the act alone tells nothing)",
    ),
]
export_app = typer.Typer(help="Turn runs into training datasets.", no_args_is_help=True)


# judge's options are the experts graph's input fields (what Studio's form shows), by option name
JUDGE_OPTIONS = {
    name: name
    for name in ("judge", "proposer", "alternatives", "max_turns", "seed", "min_margin", "balance_acts", "base_url")
}


@one_line_errors
@model_options(
    ExpertsInput,
    JUDGE_OPTIONS,
    into="asked",
    decls={"alternatives": ("-k", "--alternatives"), "balance_acts": ("--balance-acts/--keep-act-imbalance",)},
)
def judge_command(
    run: Annotated[Path, typer.Argument(help="a run directory written by `amphoreus simulate`")],
    asked: dict[str, Any],  # JUDGE_OPTIONS' values by field, from the options model_options puts in its place
    out: Annotated[Path | None, typer.Option(help="where judgements and dpo.jsonl go; default RUN/judged")] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Re-pose sampled turns to other deciders, let both expert panels score every candidate, write DPO pairs."""
    from amphoreus_graph.data.experts import build_experts_graph

    try:
        request = ExpertsInput.model_validate(
            {**asked, "run_dir": str(run), "out_dir": str(out or RunDir(run).judged.root)}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise AmphoreusError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None
    with bad_rows(skip_bad_rows), console.status("the Genius Society and the Nameless deliberate…"):
        state = asyncio.run(build_experts_graph().compile().ainvoke(request.model_dump()))
    report = state["report"]
    table = Table(title=f"judged {report['judged_turns']} turns of {run}")
    for column in (
        "candidates",
        "DPO pairs",
        "ties dropped",
        "dropped for act balance",
        "panel agreement",
        "in-Path win rate",
    ):
        table.add_column(column)
    table.add_row(
        str(report["candidates"]),
        str(report["pairs"]),
        str(report["ties_dropped"]),
        str(report["dropped_for_balance"]),
        f"{report['agreement_rate']:.1%}",
        "n/a" if report["in_path_win_rate"] is None else f"{report['in_path_win_rate']:.1%}",
    )
    console.print(table)
    console.print(f"written to {request.out_dir}/ ({', '.join(Path(f).name for f in report['files'])})")
    if report["dropped_for_balance"]:
        console.print(
            f"{report['dropped_for_balance']} judged turns were left out so that every action is chosen as often as "
            "it is rejected (the act alone would give the pairs away); --keep-act-imbalance keeps them",
            highlight=False,
        )


@export_app.command("sft")
@one_line_errors
def export_sft_command(
    runs: Annotated[list[Path], typer.Argument(help="run directories")],
    out: Annotated[Path, typer.Option(help="dataset directory to write")],
    format: Annotated[str, typer.Option("--format", help="jsonl or parquet")] = "jsonl",
    path: Annotated[list[str] | None, typer.Option("--path", help="keep only these Paths (repeatable)")] = None,
    agent: Annotated[list[str] | None, typer.Option("--agent", help="keep only these agents (repeatable)")] = None,
    cycle: Annotated[list[int] | None, typer.Option("--cycle", help="keep only these cycles (repeatable)")] = None,
    action: Annotated[list[str] | None, typer.Option("--action", help="keep only these actions (repeatable)")] = None,
    exclude_fallback: Annotated[
        bool,
        typer.Option(
            "--exclude-fallback/--include-fallback",
            help="drop turns a stand-in decided when the model failed (they are not the model's)",
        ),
    ] = True,
    judged: Annotated[
        list[Path] | None, typer.Option("--judged", help="`amphoreus judge` folders (repeatable)")
    ] = None,
    min_judge_score: Annotated[
        float | None, typer.Option(help="keep only judged turns whose own decision scored at least this (1-10)")
    ] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Write chat-format SFT examples (deduplicated, with a dataset card) from one or more runs."""
    from amphoreus_graph.data.export import SftFilters, export_sft, original_scores

    if format not in ("jsonl", "parquet"):
        raise AmphoreusError(f"--format {format!r}: expected jsonl or parquet")
    if min_judge_score is not None and not judged:
        raise AmphoreusError("--min-judge-score: needs --judged DIR (a folder written by `amphoreus judge`)")
    with bad_rows(skip_bad_rows):
        filters = SftFilters(
            paths=path or [],
            agents=agent or [],
            cycles=cycle or [],
            actions=action or [],
            exclude_fallback=exclude_fallback,
            min_judge_score=min_judge_score,
            judge_scores=original_scores(judged or []),
        )
        report = export_sft(runs, out, fmt=format, filters=filters)  # type: ignore[arg-type]
    console.print(
        f"{report.rows} rows written to {out}/ (read {report.read}, filtered out {report.filtered_out}, "
        f"duplicates removed: {report.exact_duplicates} exact, {report.near_duplicates} near; "
        f"quoting a benchmark item: {report.contaminated})",
        highlight=False,
    )


@export_app.command("dpo")
@one_line_errors
def export_dpo_command(
    judged: Annotated[list[Path], typer.Argument(help="folders written by `amphoreus judge`")],
    out: Annotated[Path, typer.Option(help="dataset directory to write")],
    min_margin: Annotated[float, typer.Option(help="drop pairs whose scores differ by less")] = 0.5,
    min_score: Annotated[float | None, typer.Option(help="drop pairs whose chosen answer scored below")] = None,
    balance_acts: BalanceActs = True,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Write DPO preference pairs in TRL's conversational format (deduplicated, with a dataset card)."""
    from amphoreus_graph.data.dpo import export_dpo

    with bad_rows(skip_bad_rows):
        report = export_dpo(judged, out, min_margin=min_margin, min_score=min_score, balance_acts=balance_acts)
    console.print(
        f"{report.pairs} pairs written to {report.file} from {report.judged} judged turns "
        f"(ties dropped {report.ties_dropped}, below min score {report.below_min_score}, "
        f"duplicates {report.duplicates}, quoting a benchmark item {report.contaminated}, "
        f"dropped to balance the acts {report.dropped_for_balance}); "
        f"panel agreement {report.agreement_rate:.1%}",
        highlight=False,
    )
