"""What the benchmark scripts share: the environment they ran in, timing a call, and how they hand their report
over."""

from __future__ import annotations

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
