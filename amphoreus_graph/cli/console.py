"""What every CLI command shares: the rich consoles, the one-line treatment of user errors, following a run."""

from __future__ import annotations

import functools
import shutil
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractContextManager, aclosing, nullcontext
from pathlib import Path
from typing import Annotated, Any, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from amphoreus_graph.contracts.events import Done, ProgressEvent, Repaired
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.society.samples import skipping_bad_rows

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])
# Typer 0.29 parses with a click of its own (its exceptions derive from TyperException); older ones use click's.
_USAGE_ERRORS: tuple[type[Exception], ...] = (
    click.ClickException,
    *[getattr(typer, "TyperException", click.ClickException)],
)
SkipBadRows = Annotated[
    bool, typer.Option("--skip-bad-rows", help="go on past a row that does not parse, with one warning line for each")
]


def command_name() -> str:
    """How to call this CLI again from a new shell: `amphoreus` where that name finds this very program, else the
    path it was started by (`.venv/bin/amphoreus` before the virtualenv is activated)."""
    invoked = Path(sys.argv[0])
    if invoked.name == "__main__.py":
        return f"{sys.executable} -m amphoreus_graph.cli"
    found = shutil.which("amphoreus")
    if found is not None and Path(found).resolve() == invoked.resolve():
        return "amphoreus"
    return str(invoked)


def print_error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def print_warning(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


class OneLineUsageErrors(TyperGroup):
    """The CLI's root: a mistyped option, a value out of range or of the wrong type is one `error:` line and
    exit 2, like every other user error (typer would draw a five-line box)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            result = super().main(
                args, prog_name, complete_var, standalone_mode=False, windows_expand_args=windows_expand_args, **extra
            )
        except typer.Abort:
            print_error("aborted")
            sys.exit(1)
        except _USAGE_ERRORS as exc:
            error: Any = exc  # click's or typer's own click: the same interface, two class trees
            if type(error).__name__ == "NoArgsIsHelpError":  # `amphoreus export` alone: its help, as click shows it
                error.show()
                sys.exit(error.exit_code)
            context = getattr(error, "ctx", None)
            where = context.command_path if context is not None else "amphoreus"
            print_error(f"{where}: {error.format_message()} (see {where} --help)")
            sys.exit(2)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)


def bad_rows(skip: bool) -> AbstractContextManager[None]:
    """Readers inside stop at a damaged row (one error line naming file:line), or skip it with a warning."""
    return skipping_bad_rows(print_warning) if skip else nullcontext()


def one_line_errors(command: F) -> F:
    """Turn a user error into `error: …` on stderr and exit code 2, a run stopped on purpose (a budget, an
    unreachable model) into exit code 3 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AmphoreusError as exc:
            print_error(str(exc))
            raise typer.Exit(getattr(exc, "exit_code", 2)) from None
        except KeyboardInterrupt:
            err_console.print("interrupted: resume with `amphoreus simulate --resume RUN`")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


async def follow(events: AsyncGenerator[ProgressEvent, None], show: Callable[[ProgressEvent], None]) -> dict[str, Any]:
    """Hand each progress event of a run to `show`; return the summary its final `done` event carries. A shard
    the run repaired on resume is said on stderr, whatever the view.

    The stream is closed on the way out, so an error in `show` or Ctrl-C stops the run at once."""
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, Done):
                return dict(event.summary)
            if isinstance(event, Repaired):
                print_warning(event.message)
            show(event)
    raise AmphoreusError("the run ended without a summary")
