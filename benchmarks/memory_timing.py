"""How the memory benchmark (see memory.py) times things and states the times: seconds per label for the
breakdowns, milliseconds rounded alike everywhere, and percentiles over a pass."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import numpy as np

P = ParamSpec("P")
T = TypeVar("T")


class Timer:
    """Seconds and calls per label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[label] += time.perf_counter() - started
            self.calls[label] += 1


def timed(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[T, float]:
    """What `work(*args, **kwargs)` returns, and the seconds it took: a phase's wall time for the report."""
    started = time.perf_counter()
    result = work(*args, **kwargs)
    return result, time.perf_counter() - started


def median_ms(call: Callable[[int], Any], n: int = 40) -> float:
    """Median ms of `call(i)` for i in 0..n-1: one call's typical cost, unmoved by the odd stall."""
    times = []
    for i in range(n):
        started = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - started)
    return ms(statistics.median(times))


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def ms(seconds: float) -> float:
    return round(1000 * seconds, 3)


def summary_ms(latencies: list[float]) -> dict[str, float]:
    return {
        "p50": ms(pct(latencies, 50)),
        "p90": ms(pct(latencies, 90)),
        "p99": ms(pct(latencies, 99)),
        "mean": ms(statistics.mean(latencies)),
        "max": ms(max(latencies)),
    }


def slowest(latencies: list[float], queries: list[tuple[str, str]], n: int = 5) -> list[dict[str, Any]]:
    """The n slowest recalls of a pass: position in the pass, agent, ms (to tell a stall from a slow path)."""
    order = sorted(range(len(latencies)), key=lambda i: -latencies[i])[:n]
    return [{"index": i, "agent": queries[i][0], "ms": ms(latencies[i])} for i in sorted(order)]
