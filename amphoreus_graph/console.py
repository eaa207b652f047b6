"""What every CLI command shares: the rich consoles and the one-line treatment of user errors."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from amphoreus_graph.errors import AmphoreusError

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(command: F) -> F:
    """Turn a user error into `error: …` on stderr and exit code 2 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AmphoreusError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err_console.print("interrupted: resume with `amphoreus simulate --resume RUN`")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
