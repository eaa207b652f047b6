"""`kill -9` in the middle of a large society's run, then `--resume`: byte-identical to an uninterrupted run?

The workload is benchmarks/scale.py's (the fair world cloned to `--agents`, `attention` and `sight` as given), run by
the CLI as a user runs it: once to the end, and once killed with SIGKILL as its samples pass `--kill-at` (a share of
the run's turns; mid-round, since samples land a round at a time and the kill waits a random moment after), then
resumed to the end. The samples, the chronicle and every agent's memory are compared byte for byte (tests/
test_resume.py does the same for 12 agents at random points; this is the check at 1,000).

    python benchmarks/kill_resume.py --agents 1000 --rounds 3

The JSON goes to benchmarks/results/kill_resume.json (`--results`, `--no-save`); the exit status is 1 if anything
differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_common import environment, publish, results_options  # noqa: E402
from benchmarks.scale import cloned_scenario  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "kill_resume.json"
PACKAGES = ("langgraph", "langgraph-checkpoint-sqlite", "chromadb")


def simulate(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def lines(run: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in (run / "samples").glob("*.jsonl"))


def memory_dump(run: Path, scenario: Path) -> Any:
    from amphoreus_graph.catalogs.scenario import load_scenario
    from amphoreus_graph.memory.store import MemorySpec, open_memory

    memory = open_memory(MemorySpec(directory=run / "memory"), run.name, load_scenario(scenario).agent_names)
    try:
        return memory.dump()
    finally:
        memory.close()


def finished(process: subprocess.Popen[bytes], what: str) -> float:
    began = time.perf_counter()
    out, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{what} failed:\n{out.decode()[-3000:]}")
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--attention", type=int, default=3)
    parser.add_argument("--sight", type=int, default=12, help="0: unbounded")
    parser.add_argument("--kill-at", type=float, default=0.4, help="share of the run's turns sampled before the kill")
    parser.add_argument("--seed", type=int, default=5)
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="amphoreus-kill-") as tmp:
        folder = Path(tmp)
        scenario = cloned_scenario(args.agents, folder, args.attention, args.sight or None)
        common = ["--scenario", str(scenario), "--cycles", "1", "--rounds", str(args.rounds), "--seed", str(args.seed)]
        clean, killed = folder / "clean" / "run", folder / "killed" / "run"
        started = time.perf_counter()
        reference = finished(simulate(*common, "--quiet", "--out", str(clean)), "the uninterrupted run")
        turns = lines(clean)
        process = simulate(*common, "--quiet", "--out", str(killed))
        while process.poll() is None and lines(killed) < args.kill_at * turns:
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 1.0))
        if process.poll() is not None:
            raise SystemExit("the run finished before it could be killed: lower --kill-at")
        at_kill = lines(killed)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        resumed = finished(simulate("--resume", str(killed), "--quiet"), "the resume")
        compared = {
            f"{folder_name}/{shard.name}": (killed / folder_name / shard.name).read_bytes() == shard.read_bytes()
            for folder_name in ("samples", "chronicle")
            for shard in sorted((clean / folder_name).iterdir())
        }
        same_memory = memory_dump(killed, scenario) == memory_dump(clean, scenario)
        report = {
            "agents": args.agents,
            "rounds": args.rounds,
            "attention": args.attention,
            "sight": args.sight or None,
            "turns": turns,
            "samples_at_kill": at_kill,
            "uninterrupted_s": round(reference, 1),
            "resume_s": round(resumed, 1),
            "identical_files": compared,
            "identical_memory": same_memory,
            "identical": all(compared.values()) and same_memory,
            "wall_s": round(time.perf_counter() - started, 1),
        }
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, json.dumps(report, indent=1), path=args.results, save=not args.no_save, as_json=False)
    return 0 if report["identical"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
