"""Real-model figures: the model gateway against the OpenAI-compatible test server (tests/openai_server.py), through
the real langchain-openai client, on 127.0.0.1.

Sections (`all` runs each):
- round: a round's wall ÷ one call's latency at a server latency of L seconds (default 0.5). `gateway`: 12
  concurrent calls through one ChatCaller ÷ one call. `society_null_memory`: a 12-agent society whose agents decide
  by the served model, with NullMemory (the engine + gateway on their own). `society_real_memory`: the same with
  the run's real memory, whose importance ratings and reflections also ask the model (issue 17 takes that on).
  A round's wall is the time from one `round_done` to the next (every node of the round, memory included); the
  decide phase is `round_started` to the round's last `turn_done`.
- crowd: one society of `--agents` (default 1,000; the fair world cloned with `attention: 3`, as benchmarks/scale.py
  builds it, `--sight` 12) deciding by the served model at `--limit` requests in flight (default 256), with its real
  memory, the model rating importance and reflecting (issue 37): `waves_ratio` is a steady round's wall ÷
  (ceil(agents ÷ limit) × L), 1.0 being a round that costs only its waves of model latency.
- societies: 16 "societies" (each a thread with its own event loop and its own ChatCaller, i.e. its own
  `--max-concurrency 64`), each playing rounds of 12 concurrent calls against one endpoint: they share the
  endpoint's limiter. The server counts the requests it is answering at each instant; the figure is the
  time-weighted mean over the steady window (from one latency after the first request arrives to one latency
  before the last one ends: the ramp and the tail left out) ÷ 64, with the peak (never above 64).
- cache: a call answered from a warm response cache (a ~3 KB prompt, in-process stand-in model so no network time
  hides anything): its whole time, median and p95 over N hits; beside it the same call with no cache.

Figures depend on the machine's load: the JSON records it (benchmarks/bench_common.py). `--quick` is a smoke run.
The JSON goes to benchmarks/results/models.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test server lives in tests/
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage  # noqa: E402

from amphoreus_graph.contracts.turn import CallStats  # noqa: E402
from amphoreus_graph.layout import RunDir  # noqa: E402
from amphoreus_graph.models.cache import ResponseCache  # noqa: E402
from amphoreus_graph.models.chat import chat_caller  # noqa: E402
from amphoreus_graph.models.fake import ScriptedChatModel  # noqa: E402
from amphoreus_graph.models.gateway import ChatCaller, Role  # noqa: E402
from amphoreus_graph.models.limits import forget_limiters, limiter_stats  # noqa: E402
from amphoreus_graph.models.transport import Transport  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402
from tests.openai_server import InFlight, OpenAIServer, mean_in_flight  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "models.json"
PACKAGES = ("langchain-openai", "langgraph", "chromadb")


class ServerProcess:
    """The test server with an InFlight replier in a process of its own, as a real model server is: its threads do
    not share the benchmark's interpreter lock. `changes` comes back when it stops."""

    def __init__(self, latency_s: float) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._out: Any = context.Queue()
        self._process = context.Process(target=_serve, args=(latency_s, self._stop, self._out), daemon=True)
        self.url = ""
        self.changes: list[tuple[float, int]] = []
        self.roles: dict[str, int] = {}

    def __enter__(self) -> ServerProcess:
        self._process.start()
        self.url = self._out.get(timeout=60)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.changes, self.roles = self._out.get(timeout=60)
        self._process.join(timeout=10)


def _serve(latency_s: float, stop: Any, out: Any) -> None:
    replier = InFlight(latency_s)
    with OpenAIServer(replier=replier) as server:
        out.put(server.url)
        stop.wait()
    out.put((replier.changes, dict(replier.roles)))


def _question(i: int, size: int = 0) -> list[BaseMessage]:
    system = SystemMessage("You are a member of a society. " + "Context line. " * (size // 14))
    return [system, HumanMessage(f"Question {i}: what do you do this round?")]


# --- round wall ÷ one call ------------------------------------------------------------------------------------


def gateway_round(latency_s: float, repeats: int, transport: str = "lean") -> dict[str, Any]:
    with ServerProcess(latency_s) as server:
        caller = chat_caller(
            "bench-model", role=Role.DECIDE, base_url=server.url, max_concurrency=16, transport=Transport(transport)
        )

        async def timed(n: int, offset: int) -> float:
            started = time.perf_counter()
            await asyncio.gather(*(caller(_question(offset + i), CallStats()) for i in range(n)))
            return time.perf_counter() - started

        async def measure() -> tuple[list[float], list[float]]:
            await timed(1, 10_000)  # the connection pool's first connection
            ones = [await timed(1, 100 * r) for r in range(repeats)]
            twelves = [await timed(12, 1000 + 100 * r) for r in range(repeats)]
            return ones, twelves

        ones, twelves = asyncio.run(measure())
    one, twelve = statistics.median(ones), statistics.median(twelves)
    return {"one_call_s": round(one, 4), "twelve_calls_s": round(twelve, 4), "ratio": round(twelve / one, 3)}


def society_round(
    latency_s: float,
    rounds: int,
    *,
    real_memory: bool,
    transport: str = "lean",
    agents: int | None = None,
    limit: int | None = None,
    sight: int | None = None,
) -> dict[str, Any]:
    """A society against the served model: per-round walls from the run's own progress events. The default world's
    12 agents, or `agents` (the fair world cloned, `attention: 3` and `sight`, as benchmarks/scale.py builds it)
    deciding with at most `limit` requests in flight; `waves_ratio` is then the round's wall ÷ (ceil(agents ÷ limit)
    × latency)."""
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society.runner import RunConfig, Simulation
    from benchmarks.scale import cloned_scenario

    with ServerProcess(latency_s) as server, tempfile.TemporaryDirectory(prefix="amphoreus-models-") as tmp:
        crowd = None if agents is None else cloned_scenario(agents, Path(tmp), attention=3, sight=sight)
        scenario = "amphoreus" if crowd is None else str(crowd)
        config = RunConfig(
            scenario=scenario,
            cycles=1,
            rounds=rounds,
            model="bench-model",
            base_url=server.url,
            out=Path(tmp) / "run",
            cache=False,
            transport=Transport(transport),
            **({} if limit is None else {"max_concurrency": limit}),
        )
        sim = (
            Simulation(config)
            if real_memory
            else Simulation(
                config,
                policy=resolve_model(
                    "bench-model", base_url=server.url, max_concurrency=16, transport=Transport(transport)
                ),
                memory=NullMemory(),
            )
        )
        marks: list[tuple[str, float]] = []

        async def run() -> None:
            async for event in sim.stream():
                if event.type in {"round_started", "turn_done", "round_done"}:
                    marks.append((event.type, time.perf_counter()))

        asyncio.run(run())
    done = [at for kind, at in marks if kind == "round_done"]
    walls = [b - a for a, b in itertools.pairwise(done)]
    if not walls:
        raise SystemExit(
            f"models.py: the society played {len(done)} round(s) (its cycle ended); a steady round needs 2: expected "
            "a world that lasts more rounds (a crowd with unbounded sight finishes the fair in one)"
        )
    phases, opened, last_turn = [], None, None
    for kind, at in marks:
        if kind == "round_started":
            opened, last_turn = at, None
        elif kind == "turn_done":
            last_turn = at
        elif kind == "round_done" and opened is not None and last_turn is not None:
            phases.append(last_turn - opened)
    steady = statistics.median(walls)
    decide = statistics.median(phases[1:] or phases)
    figures = {
        "rounds": rounds,
        "round_wall_s": round(steady, 3),
        "ratio": round(steady / latency_s, 3),
        "decide_phase_s": round(decide, 3),
        "decide_ratio": round(decide / latency_s, 3),
        "requests_by_role": server.roles,
    }
    if agents is not None and limit is not None:
        waves = -(-agents // limit)
        figures |= {
            "agents": agents,
            "limit": limit,
            "sight": sight,
            "waves": waves,
            "waves_ratio": round(steady / (waves * latency_s), 3),
        }
    return figures


# --- 16 societies, one endpoint ------------------------------------------------------------------------------


def shared_endpoint(societies: int, limit: int, agents: int, rounds: int, latency_s: float) -> dict[str, Any]:
    forget_limiters()
    with ServerProcess(latency_s) as server:

        def society(index: int) -> None:
            caller = chat_caller("bench-model", role=Role.DECIDE, base_url=server.url, max_concurrency=limit)

            async def play() -> None:
                for r in range(rounds):
                    questions = (_question(index * 10_000 + r * 100 + a) for a in range(agents))
                    await asyncio.gather(*(caller(q, CallStats()) for q in questions))

            asyncio.run(play())

        started = time.monotonic()
        threads = [threading.Thread(target=society, args=(i,)) for i in range(societies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
        stats = limiter_stats().get(server.url, {})
    first, last = server.changes[0][0], server.changes[-1][0]
    window = (first + latency_s, last - latency_s)
    mean = mean_in_flight(server.changes, *window)
    return {
        "societies": societies,
        "agents": agents,
        "rounds": rounds,
        "limit": limit,
        "requests": societies * agents * rounds,
        "wall_s": round(wall, 3),
        "window_s": round(window[1] - window[0], 3),
        "mean_in_flight": round(mean, 2),
        "fraction_of_limit": round(mean / limit, 3),
        "peak_in_flight": max(n for _, n in server.changes),
        "limiter": stats,
    }


# --- the cache on a hit ---------------------------------------------------------------------------------------


def cache_hit(calls: int, prompt_bytes: int) -> dict[str, Any]:
    questions = [_question(i, prompt_bytes) for i in range(calls)]
    with tempfile.TemporaryDirectory(prefix="amphoreus-cache-") as tmp, ResponseCache(RunDir(Path(tmp)).cache) as cache:
        cached = ChatCaller(ScriptedChatModel(), role=Role.DECIDE, cache=cache)
        plain = ChatCaller(ScriptedChatModel(), role=Role.DECIDE)

        async def timed(caller: ChatCaller) -> list[float]:
            spent = []
            for messages in questions:
                started = time.perf_counter()
                await caller(messages, CallStats())
                spent.append((time.perf_counter() - started) * 1000)
            return spent

        async def measure() -> tuple[list[float], list[float]]:
            await timed(cached)  # every answer stored
            return await timed(cached), await timed(plain)

        hits, uncached = asyncio.run(measure())
        stored = len(cache)

    def p(values: list[float], q: float) -> float:
        return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 4)

    return {
        "calls": calls,
        "prompt_chars": sum(len(str(m.content)) for m in questions[0]),
        "entries": stored,
        "hit_ms_p50": p(hits, 0.5),
        "hit_ms_p95": p(hits, 0.95),
        "no_cache_ms_p50": p(uncached, 0.5),
    }


# --- the report -------------------------------------------------------------------------------------------------


SECTIONS = ("round", "crowd", "societies", "cache")


def section(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One section's figures, measured in this process."""
    if name == "round":
        rounds: dict[str, Any] = {
            "gateway": gateway_round(args.latency, repeats=2 if args.quick else 5, transport=args.transport),
            "society_null_memory": society_round(
                args.latency, 2 if args.quick else 4, real_memory=False, transport=args.transport
            ),
        }
        if not args.quick:
            rounds["society_real_memory"] = society_round(args.latency, 3, real_memory=True, transport=args.transport)
        return rounds
    if name == "crowd":
        agents, limit = (24, 8) if args.quick else (args.agents, args.limit)  # quick: three waves of a small crowd
        return society_round(
            args.latency,
            2 if args.quick else args.rounds,
            real_memory=True,
            agents=agents,
            limit=limit,
            sight=args.sight or None,
        )
    if name == "societies":
        return shared_endpoint(
            societies=4 if args.quick else 16,
            limit=16 if args.quick else 64,
            agents=12,
            rounds=2 if args.quick else 6,
            latency_s=args.latency,
        )
    return cache_hit(200 if args.quick else 2000, prompt_bytes=3000)


def in_a_fresh_process(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """A section run by a new interpreter: what one leaves behind (Chroma's and the embedder's threads, the
    gateway's open connections) must not weigh on the next one's figures."""
    command = [sys.executable, __file__, name, "--json", "--no-save", "--latency", str(args.latency)]
    command += ["--transport", args.transport, "--agents", str(args.agents), "--limit", str(args.limit)]
    command += ["--rounds", str(args.rounds), "--sight", str(args.sight)]
    done = subprocess.run([*command, *(["--quick"] if args.quick else [])], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchmarks/models.py {name}: failed\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1])[name])


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    report: dict[str, Any] = {"latency_s": args.latency, "quick": args.quick, "transport": args.transport}
    if args.section == "all":
        for name in SECTIONS:
            report[name] = in_a_fresh_process(name, args)
    else:
        report[args.section] = section(args.section, args)
    report["environment"] = environment(PACKAGES, load_before)
    return report


def table(report: dict[str, Any]) -> str:
    lines = [f"model gateway figures (test server latency {report['latency_s']} s)"]
    if rounds := report.get("round"):
        for name, row in rounds.items():
            lines.append(f"  round wall ÷ one call  {name:<22} {row['ratio']:>7.3f}")
            if "decide_ratio" in row:
                lines.append(f"    decide phase ÷ one call                    {row['decide_ratio']:>7.3f}")
                lines.append(f"    requests by role  {row['requests_by_role']}")
    if crowd := report.get("crowd"):
        lines.append(
            f"  {crowd['agents']} agents, limit {crowd['limit']}: round {crowd['round_wall_s']} s = "
            f"{crowd['waves_ratio']:.3f} × ({crowd['waves']} waves × latency); decide phase {crowd['decide_phase_s']} s"
        )
    if shared := report.get("societies"):
        lines.append(
            f"  {shared['societies']} societies, one endpoint, limit {shared['limit']}: "
            f"{shared['fraction_of_limit']:.1%} of the limit in flight (mean {shared['mean_in_flight']}, "
            f"peak {shared['peak_in_flight']}, window {shared['window_s']} s)"
        )
    if hit := report.get("cache"):
        lines.append(
            f"  cache hit: p50 {hit['hit_ms_p50']} ms, p95 {hit['hit_ms_p95']} ms "
            f"(no cache, in-process model: p50 {hit['no_cache_ms_p50']} ms; {hit['prompt_chars']}-char prompt)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("section", nargs="?", default="all", choices=["all", *SECTIONS])
    parser.add_argument("--latency", type=float, default=0.5, help="the test server's latency per call, seconds")
    parser.add_argument("--quick", action="store_true", help="a smoke run (seconds): smaller, fewer repeats")
    parser.add_argument("--transport", choices=[t.value for t in Transport], default=Transport.LEAN.value)
    parser.add_argument("--agents", type=int, default=1000, help="crowd: the society's size (the fair world cloned)")
    parser.add_argument("--limit", type=int, default=256, help="crowd: model requests in flight at most")
    parser.add_argument("--rounds", type=int, default=3, help="crowd: rounds played (the first is left out)")
    parser.add_argument(
        "--sight", type=int, default=12, help="crowd: the world's sight (0: unbounded, and the fair ends in a round)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    report = benchmark(args)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
