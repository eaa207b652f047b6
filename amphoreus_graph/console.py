"""What every CLI command shares: the rich consoles, the one-line treatment of user errors, following a run."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
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


async def follow(
    events: AsyncGenerator[dict[str, Any], None], show: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Hand each progress event of a run to `show`; return the summary its final `done` event carries.

    The stream is closed on the way out, so an error in `show` or Ctrl-C stops the run at once."""
    async with aclosing(events) as stream:
        async for event in stream:
            if event.get("type") == "done":
                return dict(event["summary"])
            show(event)
    raise AmphoreusError("the run ended without a summary")
