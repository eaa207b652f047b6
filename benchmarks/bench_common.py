"""What the benchmark scripts share: the environment they ran in, timing a call, their common options, and how they
hand their report over."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import Any


def environment(packages: tuple[str, ...], load_before: tuple[float, float, float]) -> dict[str, Any]:
    """Where a figure was measured: versions, machine, torch threads, and how busy the cores were."""
    import torch

    return {
        **versions(packages),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "cpu_pressure_after": cpu_pressure(),
    }


def versions(packages: tuple[str, ...]) -> dict[str, str]:
    """Python's and each installed package's version (a figure means little without them)."""
    out = {"python": platform.python_version()}
    for name in packages:
        with suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def cpu_pressure() -> str | None:
    """Linux PSI for the CPU: tells a quiet run from one that shared the cores."""
    try:
        return Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return None


def results_options(parser: argparse.ArgumentParser, default: Path) -> None:
    """`--results PATH` (where the JSON goes, `default` unless given) and `--no-save`, as every script takes them."""
    parser.add_argument("--results", type=Path, default=default, help="where the JSON is written")
    parser.add_argument("--no-save", action="store_true", help="do not write the results file")


def whole_numbers(text: str) -> list[int]:
    """An option's comma-separated whole numbers ("1,2,4"), sorted, each once (an argparse `type`)."""
    try:
        return sorted({int(n) for n in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, e.g. 1,2,4; got {text!r}") from None


def publish(report: dict[str, Any], text: str, *, path: Path, save: bool, as_json: bool) -> None:
    """Save the JSON report (unless told not to) and print it as one JSON line or as the readable text."""
    if save:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report) if as_json else text)


def median_ms(run: Callable[[], object], repeats: int) -> float:
    """Median milliseconds of `repeats` calls of `run`."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return 1000 * statistics.median(seconds)
