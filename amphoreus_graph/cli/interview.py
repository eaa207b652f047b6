"""`amphoreus interview RUN --agent NAME "QUESTION"`: an agent of a finished run answers in character."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from amphoreus_graph.cli.console import console, one_line_errors
from amphoreus_graph.cli.options import default, field_option
from amphoreus_graph.society.services import RunSettings


@one_line_errors
def interview_command(
    run: Annotated[Path, typer.Argument(help="a run directory (`amphoreus simulate`'s, or a Studio thread's)")],
    question: Annotated[str, typer.Argument(help="what to ask")],
    agent: Annotated[str, typer.Option(help="whom to ask (one of the run's agents)")],
    model: Annotated[str, field_option(RunSettings, "model")] = default(RunSettings, "model"),
    base_url: Annotated[str | None, field_option(RunSettings, "base_url")] = default(RunSettings, "base_url"),
    api_key: Annotated[str | None, typer.Option(help="the provider's key (else its env var)")] = None,
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="memories to draw on")] = 8,
    json_: Annotated[bool, typer.Option("--json", help="print the answer and its memories as JSON")] = False,
) -> None:
    """Ask an agent of a finished run a question: it answers in character from its own memories (read-only)."""
    from amphoreus_graph.contracts.memory import gist
    from amphoreus_graph.society.interview import interview

    answer = interview(run, agent, question, model=model, base_url=base_url, api_key=api_key, k=k)
    if json_:
        typer.echo(answer.model_dump_json(indent=2))
        return
    when = f"as of cycle {answer.as_of.cycle}, round {answer.as_of.round}"
    guarded = f", {', '.join(answer.flags)}" if answer.flags else ""  # the guard kept a secret out of it
    title, subtitle = Text(f"{answer.agent}: “{question}”"), Text(f"{answer.decided_by}, {when}{guarded}")
    console.print(Panel(Text(answer.answer), title=title, subtitle=subtitle))
    table = Table(title="what it recalled for the question (its own memories and public ones), best first")
    for column in ("#", "c.r", "kind"):
        table.add_column(column, no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    for i, m in enumerate(answer.memories, 1):
        kind = "public" if m.public else m.kind + (" (secret)" if m.secret else "")
        table.add_row(str(i), f"{m.cycle}.{m.round}", kind, Text(gist(m.text, 120)))
    console.print(table if answer.memories else Text(f"{answer.agent} remembers nothing."))
