"""`amphoreus studio`: LangGraph Studio's dev server for a langgraph.json, reloading when code changes and not when a
run writes.

`langgraph dev` watches its whole working directory, so every sample, chronicle row and memory file a run writes
there logs a "changes detected" line (and LangGraph's own `.langgraph_api` files one every few seconds); its CLI
has no option to narrow that. This starts the same server (`langgraph_api.cli.run_server`, what `langgraph dev`
calls) watching only the folders the configured graphs and store are defined in, and this package's.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer

import amphoreus_graph
from amphoreus_graph.catalogs.trust import DATA_ONLY
from amphoreus_graph.cli.console import one_line_errors
from amphoreus_graph.errors import AmphoreusError


def code_dirs(config_file: Path, config: dict[str, Any]) -> list[Path]:
    """The folders holding the code a graph server runs: each graph's and the store's module (a file path relative
    to the config, or an importable module), and this package; none inside another."""
    specs = [*config.get("graphs", {}).values(), (config.get("store") or {}).get("path")]
    found = {Path(amphoreus_graph.__file__).resolve().parent}
    for spec in specs:
        if isinstance(spec, dict):  # a graph given as {"path": ..., "description": ...}
            spec = spec.get("path")
        if isinstance(spec, str) and (folder := _module_folder(config_file.parent, spec.rsplit(":", 1)[0])):
            found.add(folder)
    return sorted(d for d in found if not any(d != other and d.is_relative_to(other) for other in found))


def _module_folder(base: Path, module: str) -> Path | None:
    if module.endswith(".py") or "/" in module:
        return (base / module).resolve().parent
    spec = importlib.util.find_spec(module)
    return Path(spec.origin).resolve().parent if spec is not None and spec.origin else None


@one_line_errors
def studio_command(
    config: Annotated[Path, typer.Option(help="the LangGraph configuration file")] = Path("langgraph.json"),
    host: Annotated[str, typer.Option(help="the address to serve on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="the port to serve on (another free one if it is taken)")] = 2024,
    reload: Annotated[bool, typer.Option(help="restart the server when the graphs' code changes")] = True,
    browser: Annotated[bool, typer.Option(help="open LangGraph Studio in a browser")] = True,
) -> None:
    """Serve the graphs to LangGraph Studio (`langgraph dev`, reloading on code changes but not on run output).
    Its inputs are data only: AMPHOREUS_TRUST_CODE=1 lets scenarios given to it run their code (docs/trust.md)."""
    try:
        from langgraph_api.cli import run_server
        from langgraph_cli.config import validate_config_file
    except ImportError:
        raise AmphoreusError(
            "amphoreus studio: LangGraph's dev server is not installed; expected the studio extra "
            "(pip install -e '.[studio]', or `make studio`)"
        ) from None
    if not config.is_file():
        raise AmphoreusError(f"--config {config}: no such file; expected a langgraph.json")
    try:
        settings: dict[str, Any] = dict(validate_config_file(config.resolve()))
    except (ValueError, OSError, click.ClickException) as exc:
        message = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
        raise AmphoreusError(f"{config}: {message}; expected a valid langgraph.json") from None
    os.environ[DATA_ONLY] = "1"  # a server's inputs are data, whatever the config says (catalogs/trust.py)
    base = config.resolve().parent
    os.chdir(base)  # as `langgraph dev` run there: graph paths, and runs the graphs write, are relative to it
    sys.path.append(str(base))
    sys.path.extend(str(base / d) for d in settings.get("dependencies", []) if (base / d).is_dir())
    run_server(
        host,
        port,
        reload,
        settings.get("graphs", {}),
        open_browser=browser,
        env=settings.get("env"),
        store=settings.get("store"),
        auth=settings.get("auth"),
        http=settings.get("http"),
        ui=settings.get("ui"),
        ui_config=settings.get("ui_config"),
        checkpointer=settings.get("checkpointer"),
        reload_dirs=[str(d) for d in code_dirs(config.resolve(), settings)],
    )
