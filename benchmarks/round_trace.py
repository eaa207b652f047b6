"""Where a round's time goes once the model has answered: the critical path of `latency.py`'s workload, traced.

`latency.py` says how many model latencies a round takes; this says what the rest is. It runs one variant of the same
12-agent workload (`real_memory` by default) in this process with spans around the society graph's nodes, the model
calls, the exact recall ranked ahead of the next round (`Remembrance._recall_ahead`) and each embedding run of ONNX
Runtime (its wall and its thread's CPU), then reads each steady round from its last model reply to the next round's
last request sent:

- `reply_to_gm`: the last reply of the round until the game master starts (the turns' checkpoint);
- `gm_to_recall`: the game master's end until the next round's recall is ranked (memory only): its embedding runs,
  their CPU and the wall they took (a run's wall beyond its CPU is time the run waited for a core), and with
  `--thread-cpu` the CPU each thread of the process used in that window (Linux's per-thread counters, 10 ms ticks:
  a sum over rounds);
  `to_first_run`, `runs_span` and `rank_ms` split it: the game master's end to the first run, the first run's
  start to the last one's end (on N cores at best the runs' CPU ÷ N), and the last run to the recall ranked;
- `record_ms`, `gm_to_first_request`: the round's record, and the next round's first model request;
- `request_spread`: the first to the last of the next round's requests (each turn is built on the event loop);
- `round_ms`: game master to game master.

Medians over the steady rounds (the first two left out). The spans cost a few microseconds each. Reading every
thread's counters (`--thread-cpu`) at both ends of a recall window costs the recall's own thread several ms before
its first embedding run (~40 files of /proc, while the game master's step holds the GIL), so it is off by default:
with it, read `to_first_run` and `gm_to_recall` as inflated by that. The figures are for reading where the time
goes, the ratio itself is `latency.py`'s. The JSON goes to
benchmarks/results/round_trace.json.

    python benchmarks/round_trace.py --variant real_memory --latency 0.5 --rounds 10
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_common import environment, publish, results_options  # noqa: E402
from benchmarks.latency import PACKAGES, society  # noqa: E402
from benchmarks.sampler import thread_stats  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "round_trace.json"
NODES = ("director", "agent_turn", "record", "file_behind")  # async nodes; the game master is not
VARIANTS = ("null_memory", "real_memory", "model_importance")


@dataclass(frozen=True)
class Span:
    name: str
    start: float  # ms since the trace began
    end: float
    cpu: float = 0.0  # the thread's CPU in the span, ms (embedding runs only)


class Trace:
    """Spans, and each thread's CPU over every recall ranked ahead, from wrappers put around the package's
    functions (this process only; nothing of the package is changed on disk)."""

    def __init__(self) -> None:
        self.began = time.perf_counter()
        self.spans: list[Span] = []
        self.window_cpu: Counter[str] = Counter()  # CPU seconds by thread over the recall windows
        self.lock = threading.Lock()

    def now(self) -> float:
        return 1000 * (time.perf_counter() - self.began)

    def add(self, span: Span) -> None:
        with self.lock:
            self.spans.append(span)

    def wrap_async(self, owner: Any, name: str, label: str | None = None) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = self.now()
            try:
                return await original(*args, **kwargs)
            finally:
                self.add(Span(label or name, start, self.now()))

        setattr(owner, name, timed)

    def wrap(self, owner: Any, name: str, label: str, *, thread_cpu: bool = False, window: bool = False) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu, threads = self.now(), time.thread_time(), threads_by_id() if window else None
            try:
                return original(*args, **kwargs)
            finally:
                used = 1000 * (time.thread_time() - cpu) if thread_cpu else 0.0
                self.add(Span(label, start, self.now(), used))
                if threads is not None:
                    after = threads_by_id()
                    with self.lock:
                        for thread, seconds in after.items():
                            self.window_cpu[thread] += seconds - threads.get(thread, 0.0)

        setattr(owner, name, timed)


def threads_by_id() -> dict[str, float]:
    """CPU seconds of each live thread, named by its Python name where it has one (else its OS name) and its id."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    return {f"{_family(names.get(tid, name))}#{tid}": cpu for tid, (name, cpu) in thread_stats().items()}


def _family(name: str) -> str:
    """A pool's thread name without its number (`embedder_1` → `embedder`)."""
    head, _, tail = name.rpartition("_")
    return head if tail.isdigit() and head else name


def instrument(trace: Trace, *, thread_cpu: bool = False) -> None:
    """Spans around the nodes, the model's calls, the recall ranked ahead and the embedder's runs."""
    from amphoreus_graph.memory.remembrance import Remembrance
    from amphoreus_graph.models import onnx_encoder
    from amphoreus_graph.models.fake import ScriptedChatModel
    from amphoreus_graph.society import graph

    for node in NODES:
        trace.wrap_async(graph, node)
    trace.wrap(graph, "game_master", "game_master")
    trace.wrap_async(ScriptedChatModel, "_agenerate", "model_call")
    trace.wrap(Remembrance, "_recall_ahead", "recall_ahead", window=thread_cpu)
    opened = onnx_encoder.OnnxEncoder.__init__

    def with_timed_runs(encoder: Any, *args: Any, **kwargs: Any) -> None:
        opened(encoder, *args, **kwargs)
        encoder.session = _TimedSession(encoder.session)
        trace.wrap(encoder.session, "run", "embed_run", thread_cpu=True)

    onnx_encoder.OnnxEncoder.__init__ = with_timed_runs  # type: ignore[method-assign]


class _TimedSession:
    """An ONNX Runtime session whose `run` can be wrapped (the session's own attributes cannot be replaced)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.run = session.run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def rounds_of(spans: list[Span]) -> list[dict[str, float | None]]:
    """Each round's critical path, from one game master to the next."""
    masters = sorted((s for s in spans if s.name == "game_master"), key=lambda s: s.start)
    calls = sorted((s for s in spans if s.name == "model_call"), key=lambda s: s.start)
    out = []
    for gm, following in itertools.pairwise(masters):
        replies = [c.end for c in calls if c.end <= gm.start]
        requests = [c.start for c in calls if gm.end <= c.start <= following.start]
        if not replies or not requests:
            continue
        inside = [s for s in spans if gm.end <= s.start <= requests[0]]
        recall = next((s for s in inside if s.name == "recall_ahead"), None)
        record = next((s for s in inside if s.name == "record"), None)
        runs = [s for s in inside if s.name == "embed_run" and recall is not None and s.end <= recall.end]
        first, last = (min(r.start for r in runs), max(r.end for r in runs)) if runs else (None, None)
        out.append(
            {
                "reply_to_gm": gm.start - max(replies),
                "gm": gm.end - gm.start,
                "gm_to_recall": None if recall is None else recall.end - gm.end,
                "embed_runs": len(runs),
                "embed_cpu": sum(r.cpu for r in runs),
                "embed_wall": sum(r.end - r.start for r in runs),
                "to_first_run": None if first is None else first - gm.end,
                "runs_span": None if first is None or last is None else last - first,
                "rank_ms": None if last is None or recall is None else recall.end - last,
                "record_ms": None if record is None else record.end - record.start,
                "gm_to_first_request": requests[0] - gm.end,
                "request_spread": requests[-1] - requests[0],
                "round_ms": following.start - gm.start,
            }
        )
    return out


def medians(rounds: list[dict[str, float | None]]) -> dict[str, float | None]:
    steady = rounds[2:] or rounds
    keys = steady[0].keys() if steady else ()
    return {
        k: round(statistics.median(v), 2) if (v := [r[k] for r in steady if r[k] is not None]) else None for k in keys
    }


def traced(variant: str, latency_s: float, rounds: int, *, thread_cpu: bool = False) -> dict[str, Any]:
    trace = Trace()
    instrument(trace, thread_cpu=thread_cpu)
    society(variant, latency_s, rounds)
    per_round = rounds_of(trace.spans)
    windows = sum(1 for s in trace.spans if s.name == "recall_ahead")
    by_thread: Counter[str] = Counter()
    for thread, seconds in trace.window_cpu.items():
        by_thread[thread.split("#")[0]] += seconds
    return {
        "variant": variant,
        "latency_s": latency_s,
        "rounds": rounds,
        "median": medians(per_round),
        "per_round": [{k: None if v is None else round(v, 2) for k, v in r.items()} for r in per_round],
        # what each thread used over all the recall windows, ms a window (10 ms ticks, summed over the windows)
        "recall_window_cpu_ms_by_thread": {
            name: round(1000 * s / windows, 1) for name, s in by_thread.most_common() if windows and s > 0
        },
    }


def table(report: dict[str, Any]) -> str:
    m = report["median"]
    lines = [f"{report['variant']}, L = {report['latency_s']} s, {report['rounds']} rounds: medians, ms"]
    lines += [f"  {key:<22}{'-' if value is None else value}" for key, value in m.items()]
    if threads := report["recall_window_cpu_ms_by_thread"]:
        lines.append("  CPU in a recall window, ms, by thread: " + ", ".join(f"{k} {v}" for k, v in threads.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="real_memory")
    parser.add_argument("--latency", type=float, default=0.5, help="the model's latency L, seconds")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--thread-cpu", action="store_true", help="also each thread's CPU in the recall windows")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    report = traced(args.variant, args.latency, args.rounds, thread_cpu=args.thread_cpu)
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
