"""Random damage to a run directory, and what `simulate --resume` must make of it; shared by tests/test_damage.py (a
small fixed sample) and benchmarks/damage.py (hundreds of seeds, tallied).

A case copies one of two runs (stopped after cycle 1 round 2, or finished), damages the copy in one of these ways,
then resumes it in a process of its own:

- truncate, zero a 4 KiB page, flip bytes, or delete: a random file of the run (shards, checkpoint, config, summary,
  call log, any file of the memory store), or delete one of its folders;
- edit a value: a random leaf of a random committed line of a shard, or of config.json, into another valid value;
- rename the run: its directory moved to another name;
- a second writer: two resumes of the run started together.

The outcome must be one of:

- `identical`: exit 0, and the run's shards, summary (but its wall time) and memories are those of the run resumed
  undamaged;
- `refused`: exit 2 or 3 with exactly one `error:` line and no traceback, and no file of the run outside its memory
  store changed (Chroma rewrites its own files when it opens a store, so the store is compared by what it holds
  where it can still be read).

Anything else is a failure: `diverged` (exit 0 with other bytes: a silent run on a different past), `crash` (a
traceback, a signal, another exit code), `hang` (no end within the time limit), `changed` (a refusal that changed
what the run had written), `noisy` (a refusal in more than one line).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ARGS = ["--scenario", "trio", "--cycles", "2", "--rounds", "3", "--seed", "3", "--quiet"]
KINDS = ("truncate", "zero_page", "flip_bytes", "delete", "edit_value", "rename", "second_writer")
GOOD = ("identical", "refused")
TIMEOUT_S = 240

STOP_AT = """
import asyncio, sys
from pathlib import Path
from amphoreus_graph.errors import RunStopped
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.runner import RunConfig, Simulation
run = Path(sys.argv[1])
limits = Limits(stop_after=(1, 2))
sim = Simulation(RunConfig(scenario="trio", cycles=2, rounds=3, seed=3, out=run, limits=limits))
try:
    asyncio.run(sim.run())
except RunStopped:
    pass
"""

DUMP = """
import hashlib, json, sys
from pathlib import Path
from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.memory.store import MemorySpec, open_memory
memory = open_memory(MemorySpec(directory=Path(sys.argv[1])), sys.argv[2], load_scenario("trio").agent_names)
print(hashlib.sha256(json.dumps(memory.dump(), sort_keys=True).encode()).hexdigest())
memory.close()
"""


def _python(*args: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _resume(run: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "amphoreus_graph.cli", "simulate", "--resume", str(run), "--quiet"]
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def memory_digest(store: Path, society: str = "run") -> str | None:
    """What the store holds (every record), as a digest; None where it cannot be read."""
    done = _python("-c", DUMP, str(store), society, timeout=120)
    return done.stdout.strip() if done.returncode == 0 else None


def shards(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.glob("*/cycle-*.jsonl"))}


def summary(run: Path) -> dict[str, Any] | None:
    try:
        return {k: v for k, v in json.loads((run / "summary.json").read_text()).items() if k != "wall_time_s"}
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Reference:
    """The runs cases start from, and what an undamaged resume of them gives."""

    stopped: Path  # stopped after cycle 1 round 2 (its config lets it run to the end when resumed)
    finished: Path
    shards: dict[str, bytes]
    summary: dict[str, Any] | None
    memory: str | None


def prepare(root: Path) -> Reference:
    """The two runs (in processes of their own) and the undamaged outcome."""
    stopped = root / "stopped" / "run"
    stopped.parent.mkdir(parents=True)
    done = _python("-c", STOP_AT, str(stopped))
    assert done.returncode == 0, done.stderr
    config = json.loads((stopped / "config.json").read_text())
    config["limits"]["stop_after"] = None
    (stopped / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    finished = Path(shutil.copytree(stopped, root / "finished" / "run"))
    resumed = _resume(finished)
    output = resumed.communicate(timeout=TIMEOUT_S)[0]
    assert resumed.returncode == 0, output
    return Reference(stopped, finished, shards(finished), summary(finished), memory_digest(finished / "memory"))


def _files(run: Path) -> list[Path]:
    return sorted(p for p in run.rglob("*") if p.is_file())


def _outside_memory(run: Path) -> dict[str, str]:
    """Every file of the run but its memory store, by digest."""
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in _files(run)
        if p.relative_to(run).parts[0] != "memory"
    }


def _truncate(path: Path, rng: random.Random) -> str:
    size = path.stat().st_size
    at = rng.randrange(size) if size else 0
    with open(path, "r+b") as handle:
        handle.truncate(at)
    return f"cut at {at} of {size}"


def _zero_page(path: Path, rng: random.Random) -> str:
    size = path.stat().st_size
    at = rng.randrange(max(1, size // 4096 + (size % 4096 > 0))) * 4096
    with open(path, "r+b") as handle:
        handle.seek(at)
        handle.write(bytes(min(4096, max(0, size - at))))
    return f"zeroed 4 KiB at {at} of {size}"


def _flip_bytes(path: Path, rng: random.Random) -> str:
    data = bytearray(path.read_bytes())
    if not data:
        return "empty: nothing to flip"
    spots = sorted(rng.randrange(len(data)) for _ in range(rng.randint(1, 8)))
    for spot in spots:
        data[spot] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    return f"flipped bytes at {spots}"


def _mutated(value: Any, rng: random.Random) -> Any:
    """Another valid value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([-2, -1, 1, 2, 7])
    if isinstance(value, float):
        return round(value + rng.choice([-0.5, 0.25, 1.0]), 3)
    if isinstance(value, str):
        if not value:
            return "x"
        at = rng.randrange(len(value))
        return value[:at] + chr((ord(value[at]) - 31) % 94 + 33) + value[at + 1 :]
    return value


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [leaf for key, child in node.items() for leaf in _leaves(child, (*path, key))]
    if isinstance(node, list):
        return [leaf for i, child in enumerate(node) for leaf in _leaves(child, (*path, i))]
    return [path] if node is not None else []


def _edit(node: Any, rng: random.Random) -> str | None:
    leaves = _leaves(node)
    if not leaves:
        return None
    where = rng.choice(leaves)
    parent = node
    for key in where[:-1]:
        parent = parent[key]
    before = parent[where[-1]]
    parent[where[-1]] = _mutated(before, rng)
    return f"{'.'.join(map(str, where))}: {before!r} -> {parent[where[-1]]!r}"


def _edit_value(run: Path, rng: random.Random) -> str:
    shard_files = [p for p in run.glob("*/cycle-*.jsonl") if p.stat().st_size]
    if shard_files and rng.random() < 0.8:
        path = rng.choice(shard_files)
        lines = path.read_bytes().splitlines(keepends=True)
        n = rng.randrange(len(lines))
        row = json.loads(lines[n])
        what = _edit(row, rng)
        lines[n] = (json.dumps(row, ensure_ascii=False) + "\n").encode()
        path.write_bytes(b"".join(lines))
        return f"{path.relative_to(run)} line {n + 1}: {what}"
    config = json.loads((run / "config.json").read_text())
    what = _edit(config, rng)
    (run / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return f"config.json: {what}"


def damage(run: Path, kind: str, rng: random.Random) -> tuple[Path, str]:
    """Damage the run; returns where the run now is and what was done."""
    if kind == "rename":
        moved = run.rename(run.parent / f"renamed-{rng.randrange(10**6)}")
        return moved, f"moved to {moved.name}"
    if kind == "edit_value":
        return run, _edit_value(run, rng)
    if kind == "second_writer":
        return run, "two resumes at once"
    files = _files(run)
    if kind == "delete" and rng.random() < 0.3:
        folders = [p for p in run.rglob("*") if p.is_dir()]
        folder = rng.choice(folders)
        shutil.rmtree(folder)
        return run, f"deleted folder {folder.relative_to(run)}"
    target = rng.choice(files)
    if kind == "delete":
        target.unlink()
        return run, f"deleted {target.relative_to(run)}"
    how = {"truncate": _truncate, "zero_page": _zero_page, "flip_bytes": _flip_bytes}[kind](target, rng)
    return run, f"{target.relative_to(run)}: {how}"


def _judge(code: int | None, output: str, before: dict[str, str], run: Path, reference: Reference) -> tuple[str, str]:
    """(outcome, detail) of one resume."""
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    if code is None:
        return "hang", ""
    if code == 0:
        if shards(run) != reference.shards or summary(run) != reference.summary:
            return "diverged", "shards or summary differ"
        if memory_digest(run / "memory") != reference.memory:
            return "diverged", "memories differ"
        return "identical", ""
    if code in (2, 3) and "Traceback" not in output:
        if len(errors) != 1:
            return "noisy", output[-400:]
        after = _outside_memory(run)
        if after != before:
            changed = sorted(k for k in {*after, *before} if after.get(k) != before.get(k))
            return "changed", f"{changed}: {errors[0][:200]}"
        return "refused", errors[0][:300]
    return "crash", f"exit {code}: {output[-600:]}"


def run_case(seed: int, reference: Reference, work: Path) -> dict[str, Any]:
    """One random damage and its resume; the outcome with what was done."""
    rng = random.Random(seed)
    kind = rng.choice(KINDS)
    source = rng.choice([reference.stopped, reference.finished])
    run = Path(shutil.copytree(source, work / f"case-{seed}" / "run"))
    run, what = damage(run, kind, rng)
    before = _outside_memory(run)
    processes = [_resume(run) for _ in range(2 if kind == "second_writer" else 1)]
    results = []
    for process in processes:
        try:
            output = process.communicate(timeout=TIMEOUT_S)[0]
            results.append((process.returncode, output))
        except subprocess.TimeoutExpired:
            process.kill()
            results.append((None, process.communicate()[0]))
    if kind == "second_writer":
        codes = sorted((c if c is not None else -999) for c, _ in results)
        outcome, detail = _judge(0, "", before, run, reference) if codes[0] == 0 else ("crash", str(codes))
        refused = [o for c, o in results if c == 2]
        if outcome == "identical" and codes == [0, 2] and not any("in use" in o for o in refused):
            outcome, detail = "noisy", refused[0][-300:]
        elif outcome == "identical" and codes not in ([0, 0], [0, 2]):
            outcome, detail = "crash", f"exits {codes}"
    else:
        outcome, detail = _judge(*results[0], before, run, reference)
    shutil.rmtree(work / f"case-{seed}", ignore_errors=True)
    return {"seed": seed, "kind": kind, "from": source.parent.name, "damage": what} | {
        "outcome": outcome,
        "detail": detail,
    }
