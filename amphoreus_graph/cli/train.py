"""`amphoreus train pretrain|dpo`, their options from the training settings' models. Importing this module imports no
torch: the commands load it when they run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from amphoreus_graph.cli.console import console, err_console, one_line_errors
from amphoreus_graph.cli.options import model_options, validated
from amphoreus_graph.train.configs import DpoSettings, PretrainConfig

train_app = typer.Typer(help="Train the PES model on a society's data: pre-train, then DPO.", no_args_is_help=True)


class _StepBar:
    """A progress bar that appears with the first step, so an input error before it stays one line."""

    def __init__(self, description: str, total: int | None = None) -> None:
        self.description, self.total = description, total
        self.progress: Progress | None = None
        self.task: Any = None

    def update(self, step: int, info: str, total: int | None = None) -> None:
        self.total = total or self.total
        if self.progress is None:
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
            )
            self.progress = Progress(*columns, console=err_console)
            self.progress.start()
            self.task = self.progress.add_task(self.description, total=self.total, info="")
        self.progress.update(self.task, completed=step, info=info)

    def __enter__(self) -> _StepBar:
        return self

    def __exit__(self, *_: object) -> None:
        if self.progress is not None:
            self.progress.stop()


# pretrain's options that are PretrainConfig's fields as they are (steps, lr and device mean more: see below)
PRETRAIN_OPTIONS = {name: name for name in ("base", "batch_size", "seed", "loss", "max_length", "save_every")}


@train_app.command("pretrain")
@one_line_errors
@model_options(PretrainConfig, PRETRAIN_OPTIONS, into="asked")
def pretrain_command(
    data: Annotated[list[Path], typer.Option("--data", help="`amphoreus export sft` folder(s) (repeatable)")],
    out: Annotated[Path, typer.Option(help="checkpoint folder to write (model, tokenizer, train_log.json)")],
    asked: dict[str, Any],  # PRETRAIN_OPTIONS' values by field, from the options model_options puts in its place
    steps: Annotated[int | None, typer.Option(help="optimizer steps in all [default: 300; resumed: as saved]")] = None,
    lr: Annotated[float | None, typer.Option(help="peak rate (default 2e-3 tiny, 1e-3 small, 1e-4 a base)")] = None,
    device: Annotated[str | None, typer.Option(help="auto (CUDA + bf16 when present), cpu or cuda")] = None,
    resume: Annotated[bool, typer.Option(help="continue from the newest checkpoint in --out, as configured")] = False,
) -> None:
    """Train a small causal LM on chat examples (own BPE tokenizer and chat template), or continue a base."""
    from amphoreus_graph.train.configs import default_lr
    from amphoreus_graph.train.corpus import read_sft_rows
    from amphoreus_graph.train.pretrain import StepLog, pretrain

    fields = asked | dict(steps=steps, lr=lr or default_lr(asked["base"]), device=device)
    if resume:  # the run's saved settings hold; only --steps and --device may change
        fields = dict(steps=steps, device=device)
    config = validated(PretrainConfig, fields)
    rows = read_sft_rows(data)
    with _StepBar("pre-training") as bar:

        def hear(entry: StepLog) -> None:
            bar.update(entry.step, f"loss {entry.loss:.3f} · {entry.tokens_per_s:,.0f} tok/s", total=entry.of)

        metrics = pretrain(rows, out, config, resume=resume, on_step=hear)
    table = Table(title=f"pre-trained {metrics.base} on {metrics.examples} examples ({metrics.device})")
    for column in ("steps", "parameters", "vocab", "loss first → last", "tokens/s"):
        table.add_column(column)
    table.add_row(
        str(metrics.steps) + (f" (resumed at {metrics.resumed_from})" if metrics.resumed_from is not None else ""),
        f"{metrics.parameters:,}",
        str(metrics.vocab),
        f"{metrics.loss_first:.3f} → {metrics.loss_last:.3f}",
        f"{metrics.tokens_per_s:,.0f}",
    )
    console.print(table)
    console.print(f"written to {out}/ (model, tokenizer, train_log.json); use: --model pes:{out}", highlight=False)


# dpo's options are DpoSettings' fields, by option name
DPO_OPTIONS = {name: name for name in DpoSettings.model_fields}


@train_app.command("dpo")
@one_line_errors
@model_options(DpoSettings, DPO_OPTIONS, into="asked")
def dpo_command(
    data: Annotated[list[Path], typer.Option("--data", help="`amphoreus judge` / `export dpo` folder(s)")],
    model: Annotated[Path, typer.Option(help="checkpoint to start from (written by `train pretrain`)")],
    out: Annotated[Path, typer.Option(help="checkpoint folder to write (model, tokenizer, metrics.json)")],
    asked: dict[str, Any],  # DPO_OPTIONS' values by field, from the options model_options puts in its place
) -> None:
    """DPO (TRL) on the experts' preference pairs; reports the held-out reward margin before and after."""
    from amphoreus_graph.train.dpo import train_dpo

    settings = validated(DpoSettings, asked)
    with _StepBar("DPO", settings.steps) as bar:
        metrics = train_dpo(data, model, out, settings, on_step=lambda step, loss: bar.update(step, f"loss {loss:.3f}"))
    table = Table(title=f"DPO on {metrics.train_pairs} pairs; {metrics.heldout_pairs} held out ({metrics.device})")
    for column in ("held-out pairs", "reward margin", "reward accuracy", "log-prob margin", "log-prob accuracy"):
        table.add_column(column)
    for name, figures in (("before", metrics.before), ("after", metrics.after)):
        table.add_row(
            name,
            f"{figures.reward_margin:+.3f}",
            f"{figures.reward_accuracy:.0%}",
            f"{figures.logp_margin:+.1f}",
            f"{figures.logp_accuracy:.0%}",
        )
    console.print(table)
    console.print(f"written to {out}/ (model, tokenizer, metrics.json); use: --model pes:{out}", highlight=False)
