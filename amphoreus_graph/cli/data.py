"""The data-engine commands: `amphoreus judge` and `amphoreus export sft|dpo`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from amphoreus_graph.cli.console import SkipBadRows, bad_rows, console, one_line_errors
from amphoreus_graph.cli.options import model_options, validated
from amphoreus_graph.data.experts_input import ExpertsInput
from amphoreus_graph.data.export import SftFilters
from amphoreus_graph.errors import AmphoreusError, output_path
from amphoreus_graph.layout import RunDir

# the option that keeps pairs balanced by act, named for both of its settings (judge and export dpo)
_BALANCE: dict[str, tuple[str, ...]] = {"balance_acts": ("--balance-acts/--keep-act-imbalance",)}
# the option that leaves out replies the discretion guard changed (judge, export sft and export dpo)
_GUARDED: dict[str, tuple[str, ...]] = {"exclude_guarded": ("--exclude-guarded/--keep-guarded",)}
export_app = typer.Typer(help="Turn runs into training datasets.", no_args_is_help=True)


# judge's options are the experts graph's input fields (what Studio's form shows), by option name
JUDGE_OPTIONS = {
    name: name
    for name in (
        "judge",
        "proposer",
        "alternatives",
        "max_turns",
        "seed",
        "min_margin",
        "balance_acts",
        "exclude_guarded",
        "base_url",
    )
}


@one_line_errors
@model_options(
    ExpertsInput,
    JUDGE_OPTIONS,
    into="asked",
    decls={"alternatives": ("-k", "--alternatives"), **_BALANCE, **_GUARDED},
)
def judge_command(
    run: Annotated[Path, typer.Argument(help="a run directory written by `amphoreus simulate`")],
    asked: dict[str, Any],  # JUDGE_OPTIONS' values by field, from the options model_options puts in its place
    out: Annotated[Path | None, typer.Option(help="where judgements and dpo.jsonl go; default RUN/judged")] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Re-pose sampled turns to other deciders, let both expert panels score every candidate, write DPO pairs."""
    from amphoreus_graph.data.experts import build_experts_graph

    if out is not None:
        output_path(out, "--out", folder=True)
    request = validated(ExpertsInput, {**asked, "run_dir": str(run), "out_dir": str(out or RunDir(run).judged.root)})
    with bad_rows(skip_bad_rows), console.status("the soundness and fidelity panels deliberate…"):
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
    if report["fallbacks"]:
        console.print(
            f"{report['fallbacks']} of {report['verdicts']} verdicts fell back to the offline panels (the judge "
            "model's reply could not be used); each pair says how many of its verdicts were theirs "
            "(fallback_verdicts)",
            highlight=False,
        )
    if report["dropped_for_balance"]:
        console.print(
            f"{report['dropped_for_balance']} judged turns were left out so that every action is chosen as often as "
            "it is rejected (the act alone would give the pairs away); --keep-act-imbalance keeps them",
            highlight=False,
        )
    if report["guarded"]:
        console.print(
            f"{report['guarded']} judged turns were left out: their pairs hold a reply the discretion guard changed "
            "because it said a secret; --keep-guarded keeps them",
            highlight=False,
        )


# export sft's filters are SftFilters' fields (option -> field)
SFT_OPTIONS = {
    "path": "paths",
    "agent": "agents",
    "cycle": "cycles",
    "action": "actions",
    "exclude_fallback": "exclude_fallback",
    "exclude_guarded": "exclude_guarded",
    "min_judge_score": "min_judge_score",
}


@export_app.command("sft")
@one_line_errors
@model_options(
    SftFilters,
    SFT_OPTIONS,
    into="filtered",
    decls={"exclude_fallback": ("--exclude-fallback/--include-fallback",), **_GUARDED},
)
def export_sft_command(
    runs: Annotated[list[Path], typer.Argument(help="run directories")],
    out: Annotated[Path, typer.Option(help="dataset directory to write")],
    filtered: dict[str, Any],  # SFT_OPTIONS' values by field, from the options model_options puts in its place
    format: Annotated[str, typer.Option("--format", help="jsonl or parquet")] = "jsonl",
    judged: Annotated[
        list[Path] | None, typer.Option("--judged", help="`amphoreus judge` folders (repeatable)")
    ] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Write chat-format SFT examples (deduplicated, with a dataset card) from one or more runs."""
    from amphoreus_graph.data.export import export_sft, original_scores

    output_path(out, "--out", folder=True)
    if format not in ("jsonl", "parquet"):
        raise AmphoreusError(f"--format {format!r}: expected jsonl or parquet")
    if filtered["min_judge_score"] is not None and not judged:
        raise AmphoreusError("--min-judge-score: needs --judged DIR (a folder written by `amphoreus judge`)")
    with bad_rows(skip_bad_rows):
        filters = SftFilters(**filtered, judge_scores=original_scores(judged or []))
        report = export_sft(runs, out, fmt=format, filters=filters)  # type: ignore[arg-type]
    console.print(
        f"{report.rows} rows written to {out}/ (read {report.read}, filtered out {report.filtered_out}, "
        f"reply changed by the discretion guard: {report.guarded}, "
        f"duplicates removed: {report.exact_duplicates} exact, {report.near_duplicates} near; "
        f"quoting a benchmark item: {report.contaminated})",
        highlight=False,
    )


# export dpo keeps pairs as the judge does: the same two settings
DPO_EXPORT_OPTIONS = {"min_margin": "min_margin", "balance_acts": "balance_acts", "exclude_guarded": "exclude_guarded"}


@export_app.command("dpo")
@one_line_errors
@model_options(ExpertsInput, DPO_EXPORT_OPTIONS, into="kept", decls={**_BALANCE, **_GUARDED})
def export_dpo_command(
    judged: Annotated[list[Path], typer.Argument(help="folders written by `amphoreus judge`")],
    out: Annotated[Path, typer.Option(help="dataset directory to write")],
    kept: dict[str, Any],  # the judge's min_margin, balance_acts and exclude_guarded, as `amphoreus judge` takes them
    min_score: Annotated[float | None, typer.Option(help="drop pairs whose chosen answer scored below")] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Write DPO preference pairs in TRL's conversational format (deduplicated, with a dataset card)."""
    from amphoreus_graph.data.dpo import export_dpo

    output_path(out, "--out", folder=True)
    with bad_rows(skip_bad_rows):
        report = export_dpo(judged, out, min_score=min_score, **kept)
    console.print(
        f"{report.pairs} pairs written to {report.file} from {report.judged} judged turns "
        f"(ties dropped {report.ties_dropped}, below min score {report.below_min_score}, "
        f"a reply changed by the discretion guard {report.guarded}, "
        f"duplicates {report.duplicates}, quoting a benchmark item {report.contaminated}, "
        f"dropped to balance the acts {report.dropped_for_balance}); "
        f"panel agreement {report.agreement_rate:.1%}",
        highlight=False,
    )
