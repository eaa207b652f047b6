"""Cost that grows with the work: per-turn time as the society grows, per-round time as memory accumulates.

Workload: the shipped Brindle Green world (`fair`, the rules kit) with its villagers cloned up to N agents (each
clone keeps its original's Path, persona, start and aim; relationships and seeds left out so no name dangles), the
offline policy, the run's real Chroma memory (embedded, on disk) and its SQLite checkpoints: the data engine as a
user runs it. Each measurement runs in a fresh interpreter.

- `agents`: N = 12, 48, 120 for one cycle, in the world's six places as they are (a crowd: every event has ~N/6
  witnesses, so the records a round files grow with N²) and again with `memory.attention` set (`--attention`,
  default 3: each villager notices at most that many events a round as a bystander); per-turn time (the steady
  rounds' wall ÷ the turns in them), Chroma write calls (upsert, update, delete) per turn, and checkpoint bytes
  per round (the SQLite file at the end ÷ rounds; and the largest single checkpoint).
- `cycles`: 12 agents for C cycles (default 10); the median round wall of each cycle, so cycle C ÷ cycle 1 says
  whether accumulated memory slows a round down.

Every size also reports its setup (wall and CPU up to the first round), CPU per turn (the process's, all threads),
the checkpoint file's growth per round and the size of one checkpoint (the largest and the latest), the memory
store's bytes, peak RSS, each finished round's figures, and where the CPU went (`benchmarks/sampler.py`; the setup's
profile apart from the rounds', and each round's own, so a cost that grows from round to round shows where). For
1,000 and 10,000 agents a measurement takes caps (`--cap` seconds, `--max-rounds`, one value or one a size;
`--max-rss-gb`, `--max-disk-gb` so a society too large for the machine is stopped, not the machine): a run they stop
reports the rounds it finished and how far the next one got, and says which cap stopped it. E.g.
`--agents 12 120 1000 10000 --no-crowd --cycles 0 --cap 0 0 600 480 --max-rounds 0 0 3 0`.

Figures depend on the machine's load: the JSON records it. The JSON goes to benchmarks/results/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from amphoreus_graph.layout import RunDir  # noqa: E402
from benchmarks.bench_common import environment, publish, results_options  # noqa: E402
from benchmarks.sampler import Sampler, folder_bytes, peak_rss_bytes, rss_bytes  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb", "onnxruntime")
FAIR = ROOT / "amphoreus_graph" / "worlds" / "fair" / "fair.yaml"


def cloned_scenario(agents: int, folder: Path, attention: int | None = None, sight: int | None = None) -> Path:
    """The fair world with its villagers cloned up to `agents` (clone k of "Name" is "Name k"), noticing
    `attention` events a round as bystanders (None: all) and `sight` others where they stand (None: all)."""
    spec = yaml.safe_load(FAIR.read_text(encoding="utf-8"))
    originals = spec["agents"]
    clones = []
    for i in range(agents):
        base = dict(originals[i % len(originals)])
        base.pop("relationships", None)
        copy = i // len(originals)
        base["name"] = base["name"] if copy == 0 else f"{base['name']} {copy + 1}"
        clones.append(base)
    spec["agents"] = clones
    for action in spec.get("actions", []):  # the world's Python resolvers, found beside the original
        if isinstance(action, dict) and "resolver" in action:
            action["resolver"] = str(FAIR.parent / action["resolver"])
    seeds = folder / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    spec["seeds"] = str(seeds)
    spec["paths"] = None
    spec["name"] = f"fair-{agents}"
    if attention is not None:
        spec["memory"] = {"attention": attention}
    if sight is not None:
        spec["sight"] = sight
    path = folder / f"fair-{agents}.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in spec.items() if v is not None}), encoding="utf-8")
    return path


class WriteCalls:
    """Counts Chroma's collection writes (every backend call that changes stored rows)."""

    def __init__(self) -> None:
        from chromadb.api.models.Collection import Collection

        self.calls: Counter[str] = Counter()
        for name in ("upsert", "update", "delete", "add"):
            original = getattr(Collection, name)

            def counted(collection: Any, *args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
                self.calls[_name] += 1
                return _original(collection, *args, **kw)

            setattr(Collection, name, counted)


class EmbeddedTexts:
    """Counts the texts the embedder's model embeds (those not in its cache) and their characters, whichever backend
    it runs on: with the embedder's CPU in a round's profile, what a text cost that round."""

    def __init__(self) -> None:
        from amphoreus_graph.models import embedder, onnx_encoder

        self.texts = self.characters = 0
        for encoder in (onnx_encoder.OnnxEncoder, embedder.TorchEncoder):
            original = encoder.encode

            def counted(model: Any, texts: list[str], *args: Any, _original: Any = original, **kw: Any) -> Any:
                self.texts += len(texts)
                self.characters += sum(len(t) for t in texts)
                return _original(model, texts, *args, **kw)

            encoder.encode = counted  # type: ignore[assignment,method-assign]


class Progress:
    """What a run has done so far, kept round by round, so that a run stopped anywhere (a time, memory or disk
    cap, a round limit) still reports the rounds it finished and how far the unfinished one got."""

    def __init__(
        self,
        agents: int,
        cycles: int,
        attention: int | None,
        sight: int | None,
        out: Path,
        embedded: EmbeddedTexts | None = None,
    ) -> None:
        self.head = {"agents": agents, "attention": attention, "sight": sight, "cycles": cycles}
        self.out = out
        self.begun = (time.perf_counter(), time.process_time())
        self.mark = self.begun  # where the round in progress began (wall, CPU)
        self.setup: dict[str, Any] | None = None
        self.rounds: list[dict[str, Any]] = []
        self.turns = self.reflections = 0  # of the round in progress
        self.embedded = embedded
        self.embedded_before = (0, 0)  # texts and characters embedded when the round in progress began
        self.loadavg = [round(x, 2) for x in os.getloadavg()]

    def round_started(self, sampler: Sampler) -> None:
        if self.setup is None:  # building the world, the memory and the graph, up to the first round
            self.mark = (time.perf_counter(), time.process_time())
            self.setup = {
                "profile": sampler.restart(),
                "wall_s": round(self.mark[0] - self.begun[0], 3),
                "cpu_s": round(self.mark[1] - self.begun[1], 3),
            }
        self.turns = 0

    def round_done(self, cycle: int, sampler: Sampler) -> None:
        now = (time.perf_counter(), time.process_time())
        files = RunDir(self.out)
        self.rounds.append(
            {
                "cycle": cycle,
                "turns": self.turns,
                "reflections": self.reflections,
                "texts_embedded": self._embedded()[0] - self.embedded_before[0],
                "characters_embedded": self._embedded()[1] - self.embedded_before[1],
                "wall_s": round(now[0] - self.mark[0], 4),
                "cpu_s": round(now[1] - self.mark[1], 4),
                "checkpoint_file_bytes": sum(p.stat().st_size for p in files.checkpoint_files() if p.is_file()),
                "memory_store_bytes": folder_bytes(files.memory),
                "rss_bytes": rss_bytes(),
                "profile": sampler.since_round(),
            }
        )
        self.mark, self.turns, self.reflections, self.embedded_before = now, 0, 0, self._embedded()

    def _embedded(self) -> tuple[int, int]:
        return (self.embedded.texts, self.embedded.characters) if self.embedded is not None else (0, 0)

    def report(self, writes: WriteCalls, sampler: Sampler, stopped: str | None, *, mid_round: bool) -> dict[str, Any]:
        """The figures so far (`mid_round`: a cap stopped the run inside a round, which is measured too). A turn's
        cost is the median over the steady rounds (from the end of the one before: the first round also pays for
        warming up), or the first round's where it is the only one."""
        rounds = self.rounds
        steady = [r for r in rounds[1:] if r["turns"]] or [r for r in rounds if r["turns"]]
        turns = sum(r["turns"] for r in rounds)
        files = [r["checkpoint_file_bytes"] for r in rounds]
        growth = [b - a for a, b in itertools.pairwise([0, *files])]
        walls: dict[int, list[float]] = {}
        for r in rounds[1:]:
            walls.setdefault(r["cycle"], []).append(r["wall_s"])
        now = time.perf_counter()
        return {
            **self.head,
            "stopped": stopped,
            "loadavg_before": self.loadavg,
            "wall_s": round(now - self.begun[0], 2),
            "setup": self.setup
            or {"wall_s": round(now - self.begun[0], 3), "unfinished": True, "profile": sampler.summary()},
            "rounds": len(rounds),
            "turns": turns,
            "ms_per_turn": median_per_turn(steady, "wall_s"),
            "cpu_ms_per_turn": median_per_turn(steady, "cpu_s"),
            "unfinished_round": {"turns": self.turns, "wall_s": round(now - self.mark[0], 2)}
            if mid_round and self.setup
            else None,
            "round_wall_s_by_cycle": {c: round(statistics.median(w), 4) for c, w in sorted(walls.items())},
            "chroma_writes": dict(writes.calls),
            "chroma_writes_per_turn": round(sum(writes.calls.values()) / max(1, turns), 3),
            "checkpoint_bytes_per_round": int(files[-1] / len(rounds)) if rounds else None,
            "checkpoint_growth_bytes_per_round": int(statistics.median(growth[1:] or growth)) if growth else None,
            **checkpoint_sizes(RunDir(self.out).checkpoint),
            "memory_store_bytes": folder_bytes(RunDir(self.out).memory),
            "peak_rss_bytes": peak_rss_bytes(),
            "per_round": rounds,
            "profile": sampler.summary() if self.setup else None,
        }


def median_per_turn(rounds: list[dict[str, Any]], key: str) -> float | None:
    """Median milliseconds of `key` per turn over `rounds` (None: no round finished)."""
    return round(1000 * statistics.median(r[key] / r["turns"] for r in rounds), 3) if rounds else None


def checkpoint_sizes(path: Path) -> dict[str, int | None]:
    """The largest single checkpoint and the latest one, in bytes (the checkpoint and its metadata)."""
    if not path.is_file():
        return {"largest_checkpoint_bytes": None, "last_checkpoint_bytes": None}
    with contextlib.closing(sqlite3.connect(path)) as db:
        size = "length(checkpoint) + length(metadata)"
        largest = db.execute(f"select max({size}) from checkpoints").fetchone()[0]
        last = db.execute(f"select {size} from checkpoints order by rowid desc limit 1").fetchone()
    return {"largest_checkpoint_bytes": largest, "last_checkpoint_bytes": last[0] if last else None}


def run_society(
    agents: int, cycles: int, attention: int | None = None, sight: int | None = None, limits: Limits | None = None
) -> NoReturn:
    """One offline run of the cloned fair world, in this process, which it ends: prints a JSON line of the
    figures so far after every round and the last one when the run ends or a limit stops it."""
    from amphoreus_graph.contracts.events import RoundDone
    from amphoreus_graph.society.runner import RunConfig, Simulation

    limits = limits or Limits()
    writes = WriteCalls()
    tmp = Path(tempfile.mkdtemp(prefix="amphoreus-scale-"))
    out = tmp / "run"
    progress = Progress(agents, cycles, attention, sight, out, EmbeddedTexts())
    sampler = Sampler(limits.sample_s, tmp, int(limits.max_rss_gb * 2**30), int(limits.max_disk_gb * 2**30))

    def finish(stopped: str | None, mid_round: bool = False) -> NoReturn:
        sampler.halt.set()
        print(json.dumps(progress.report(writes, sampler, stopped, mid_round=mid_round)), flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
        os._exit(0)  # a stopped run is not wound down: at 1,000 agents that alone takes minutes

    def stop_here(signum: int, frame: object) -> None:
        finish(sampler.over or f"time cap ({limits.cap_s:g} s)", mid_round=True)

    signal.signal(signal.SIGALRM, stop_here)
    if limits.cap_s:
        signal.setitimer(signal.ITIMER_REAL, limits.cap_s)
    sampler.start()
    scenario = cloned_scenario(agents, tmp, attention, sight)
    sim = Simulation(RunConfig(scenario=str(scenario), cycles=cycles, out=out, cache=False))

    async def run() -> None:
        async for event in sim.stream():
            if event.type == "turn_done":
                progress.turns += 1
            elif event.type == "reflected":
                progress.reflections += 1
            elif event.type == "round_started":
                progress.round_started(sampler)
            elif isinstance(event, RoundDone):
                progress.round_done(event.cycle, sampler)
                print(json.dumps(progress.report(writes, sampler, KILLED, mid_round=False)), flush=True)
                progress.mark = (time.perf_counter(), time.process_time())  # the report is not the next round's
                if limits.max_rounds and len(progress.rounds) >= limits.max_rounds:
                    finish(f"round limit ({limits.max_rounds})")

    try:
        asyncio.run(run())
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    signal.setitimer(signal.ITIMER_REAL, 0)
    finish(None)


@dataclasses.dataclass(frozen=True)
class Limits:
    """How long and how large one measurement may get: a wall-clock cap from the measurement's start, its
    interpreter's own start-up apart (None: the whole run), a round limit (0: none), resident memory and disk
    caps (a 10,000-agent society must not take the machine down with it), and the profiler's sampling interval."""

    cap_s: float | None = None
    max_rounds: int = 0
    max_rss_gb: float = 8.0
    max_disk_gb: float = 20.0
    sample_s: float = 0.01

    def args(self) -> list[str]:
        return [
            *(["--cap", str(self.cap_s)] if self.cap_s else []),
            *(["--max-rounds", str(self.max_rounds)] if self.max_rounds else []),
            *("--max-rss-gb", str(self.max_rss_gb), "--max-disk-gb", str(self.max_disk_gb)),
            *("--sample-ms", str(1000 * self.sample_s)),
        ]


GRACE_S = 300  # past its cap, a measurement that could not stop itself (stuck in native code) is killed
KILLED = f"killed {GRACE_S} s past its cap; figures from the last round it finished"


def in_a_fresh_process(
    agents: int, cycles: int, attention: int | None = None, sight: int | None = None, limits: Limits | None = None
) -> dict[str, Any]:
    """One measurement in a fresh interpreter: its last JSON line, which a measurement killed past its cap
    still has from the last round it finished. One that failed without a report is a row saying so, so that the
    other sizes' figures are kept."""
    limits = limits or Limits()
    given = [str(agents), str(cycles), str(attention or 0), str(sight or 0)]
    command = [sys.executable, __file__, "--one", *given, *limits.args()]
    timeout = limits.cap_s + GRACE_S if limits.cap_s else None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        output, failed = done.stdout, done.returncode != 0 and done.stderr[-3000:]
    except subprocess.TimeoutExpired as killed:
        output, failed = as_text(killed.stdout), False
    lines = [line for line in output.strip().splitlines() if line.startswith("{")]
    if failed or not lines:
        head = {"agents": agents, "attention": attention, "sight": sight, "cycles": cycles}
        return {**head, "failed": (failed or "no report").strip().splitlines()[-1:], "turns": 0}
    return dict(json.loads(lines[-1]))


def as_text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def table(report: dict[str, Any]) -> str:
    lines = []
    for series, heading in (("agents", "every witness notices everything"), ("attentive", "memory.attention set")):
        if not report.get(series):
            continue
        base = report[series][0]
        attention = f" = {base['attention']}" if base.get("attention") else ""
        sight = f", sight = {base['sight']}" if base.get("sight") else ""
        lines.append(f"per-turn cost as the society grows (offline policy, real memory; {heading}{attention}{sight})")
        for row in report[series]:
            if row.get("failed"):
                lines.append(f"  {row['agents']:>5} agents  failed: {' '.join(row['failed'])}")
                continue
            lines.append(size_line(row, base))
            profile = row["profile"] or row["setup"]["profile"]  # a run stopped before its first round: its setup
            if threads := profile.get("cpu_s_by_thread_name"):
                named = ", ".join(f"{name} {cpu:g}" for name, cpu in threads.items())
                lines.append(f"        CPU s by thread: {named}")
            lines.extend(f"        {share:>5.1f}%  {where}" for where, share in profile["cumulative"][:6])
    if cycles := report.get("cycles"):
        by_cycle = cycles["round_wall_s_by_cycle"]
        first, last = by_cycle[min(by_cycle, key=int)], by_cycle[max(by_cycle, key=int)]
        lines.append(
            f"per-round wall over {cycles['cycles']} cycles ({cycles['agents']} agents): cycle 1 {first:.3f} s, "
            f"last {last:.3f} s ({last / first:.2f}×)"
        )
    return "\n".join(lines)


def size_line(row: dict[str, Any], base: dict[str, Any]) -> str:
    """One size's figures; its profile's top functions follow it (share of the samples they were on the stack)."""
    mb = 2**20
    head = f"  {row['agents']:>5} agents  setup {row['setup']['wall_s']:.1f} s, {row['rounds']} rounds"
    if row["stopped"]:
        unfinished = row["unfinished_round"]
        part = f", {unfinished['turns']} turns of the next in {unfinished['wall_s']:.0f} s" if unfinished else ""
        head += f" (stopped: {row['stopped']}{part})"
    if row["ms_per_turn"] is None:
        return head + f"; peak RSS {row['peak_rss_bytes'] / mb:.0f} MB"
    times = f" ({row['ms_per_turn'] / base['ms_per_turn']:.2f}×)" if base.get("ms_per_turn") else ""
    return (
        f"{head}\n        {row['ms_per_turn']:.2f} ms/turn{times}, CPU {row['cpu_ms_per_turn']:.2f} ms/turn;"
        f" Chroma writes/turn {row['chroma_writes_per_turn']:.2f}; checkpoint file"
        f" +{(row['checkpoint_growth_bytes_per_round'] or 0) / mb:.2f} MB/round"
        f" (one checkpoint: largest {(row['largest_checkpoint_bytes'] or 0) / mb:.2f} MB);"
        f" memory store {row['memory_store_bytes'] / mb:.1f} MB; peak RSS {row['peak_rss_bytes'] / mb:.0f} MB"
    )


def cycles_for(limits: Limits) -> int:
    """Cycles a size's measurement may run: one, or as many as the rounds it is to run, since a world may end a
    cycle early (10,000 villagers finish the fair in its first round) and the next cycle's rounds count too."""
    return max(1, limits.max_rounds)


def limits_for(args: argparse.Namespace, size: int) -> Limits:
    """The limits of the `size`-th size named on the command line."""
    cap, rounds = args.cap[size % len(args.cap)], args.max_rounds[size % len(args.max_rounds)]
    return Limits(cap or None, rounds, args.max_rss_gb, args.max_disk_gb, args.sample_ms / 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[12, 48, 120])
    parser.add_argument("--cycles", type=int, default=10, help="cycles of the accumulation run (0: skip it)")
    parser.add_argument(
        "--attention", type=int, default=3, help="memory.attention of the second series (0: skip that series)"
    )
    parser.add_argument("--no-crowd", action="store_true", help="skip the series where everyone notices everything")
    parser.add_argument("--sight", type=int, default=0, help="the world's sight in the second series (0: unbounded)")
    parser.add_argument(
        "--cap", type=float, nargs="+", default=[0], help="wall seconds a measurement may take: one, or one a size"
    )
    parser.add_argument(
        "--max-rounds", type=int, nargs="+", default=[0], help="rounds a measurement runs: one, or one a size (0: all)"
    )
    parser.add_argument("--max-rss-gb", type=float, default=Limits.max_rss_gb, help="stop a measurement past this")
    parser.add_argument("--max-disk-gb", type=float, default=Limits.max_disk_gb, help="stop one writing more")
    parser.add_argument("--sample-ms", type=float, default=10, help="the profiler's sampling interval")
    parser.add_argument("--one", type=int, nargs=4, help=argparse.SUPPRESS)  # agents, cycles, attention, sight
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    for given in (args.cap, args.max_rounds):
        if len(given) not in (1, len(args.agents)):
            parser.error(f"--cap and --max-rounds take one value or one for each of the {len(args.agents)} sizes")
    limits = {n: limits_for(args, i) for i, n in enumerate(args.agents)}
    if args.one:
        agents, cycles, attention, sight = args.one
        run_society(agents, cycles, attention or None, sight or None, limits_for(args, 0))
    load_before = os.getloadavg()
    report: dict[str, Any] = {"limits": {n: dataclasses.asdict(lim) for n, lim in limits.items()}}
    if not args.no_crowd:
        report["agents"] = [in_a_fresh_process(n, cycles_for(limits[n]), None, None, limits[n]) for n in args.agents]
    if args.attention:
        sight = args.sight or None
        report["attentive"] = [
            in_a_fresh_process(n, cycles_for(limits[n]), args.attention, sight, limits[n]) for n in args.agents
        ]
    if args.cycles:
        report["cycles"] = in_a_fresh_process(args.agents[0], args.cycles, None, None, limits[args.agents[0]])
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
