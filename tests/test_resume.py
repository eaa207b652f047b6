"""`kill -9` in the middle of `amphoreus simulate`, then `--resume`: nothing lost, nothing twice."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.memory.store import MemorySpec, open_index, open_memory

# Five kills need room: each waits for a round's samples, then up to 0.3 s more (a round or two at these speeds).
LONG_ARGS = ["--scenario", "amphoreus", "--cycles", "2", "--rounds", "6", "--seed", "5", "--quiet"]
TURNS = 2 * 6 * 12  # cycles x rounds x the scenario's agents


def _simulate(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _lines(run: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in (run / "samples").glob("*.jsonl"))


def _memory(run: Path) -> dict:
    memory = open_memory(MemorySpec(directory=run / "memory"), run.name, load_scenario("amphoreus").agent_names)
    try:
        return memory.dump()
    finally:
        memory.close()


def _kill_when_progressed(process: subprocess.Popen[bytes], run: Path, rng: random.Random) -> bool:
    """SIGKILL the process at a random moment once it has written more samples than before (or a random moment
    of its start-up); False if it finished first."""
    start = _lines(run)
    extra = rng.randrange(0, 10)
    deadline = time.monotonic() + 180
    while process.poll() is None and time.monotonic() < deadline:
        if _lines(run) > start + extra or (extra == 0 and rng.random() < 0.02):
            time.sleep(rng.uniform(0, 0.3))
            break
        time.sleep(0.02)
    if process.poll() is not None:
        return False
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return True


@pytest.mark.slow
def test_kill_9_at_random_points_of_a_run_and_its_resumes_changes_nothing(tmp_path):
    """Five kills, the first in the middle of the run's first cycle and the others at random moments of each
    resume, then a resume to the end: the samples, the chronicle and the memory equal an uninterrupted run's, byte
    for byte. (One test, not a single kill and then five: each would need its own uninterrupted run.)"""
    seed = int(os.environ.get("AMPHOREUS_KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    killed, clean = tmp_path / "killed" / "run", tmp_path / "clean" / "run"
    reference = _simulate(*LONG_ARGS, "--out", str(clean))
    process = _simulate(*LONG_ARGS, "--out", str(killed))
    deadline = time.monotonic() + 180
    while _lines(killed) < 18 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 0 < _lines(killed) < TURNS
    kills, process = 1, _simulate("--resume", str(killed))
    for _ in range(4):
        kills += _kill_when_progressed(process, killed, rng)
        began = (killed / "config.json").exists()  # killed as it started: the way on is to start it again
        process = _simulate("--resume", str(killed)) if began else _simulate(*LONG_ARGS, "--out", str(killed))
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, f"kill seed {seed}: {out.decode()}"
    out, _ = reference.communicate(timeout=300)
    assert reference.returncode == 0, out.decode()
    assert kills >= 4, f"kill seed {seed}: only {kills} kills landed before the run finished"
    for folder in ("samples", "chronicle"):
        for shard in sorted((clean / folder).iterdir()):
            assert (killed / folder / shard.name).read_bytes() == shard.read_bytes(), f"seed {seed}: {shard.name}"
    assert _lines(killed) == TURNS
    assert _memory(killed) == _memory(clean), f"kill seed {seed}"


@pytest.mark.parametrize("same_dir", [True, False])
def test_a_run_killed_before_its_config_was_written_starts_again(cli, tmp_path, same_dir):
    """Its claim on the store is the only trace (no config.json, no memory): the same command starts the run again;
    a claim by another run directory on a shared store still refuses."""
    from amphoreus_graph.memory.ownership import StoreOwner, write_owner

    run, memory_dir = tmp_path / "run", tmp_path / "shared-memory"
    claimant = run if same_dir else tmp_path / "elsewhere" / "run"
    index = open_index(MemorySpec(directory=memory_dir), "run")
    write_owner(index, StoreOwner(token="killed", run_dir=str(claimant), fingerprint="-"))
    index.close()
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "1", "--quiet", "--memory-dir", str(memory_dir)]
    code, out, err = cli("simulate", *args, "--out", str(run))
    if same_dir:
        assert code == 0, out + err
    else:
        assert code == 2 and "has memories written by the run in" in err and str(claimant) in err, out + err


def test_resume_of_a_missing_run_is_one_line(cli, tmp_path):
    code, _, err = cli("simulate", "--resume", str(tmp_path / "nope"))
    assert code == 2 and "config.json: no such file" in err and "Traceback" not in err


def test_a_run_directory_is_not_overwritten(cli, tmp_path):
    run = tmp_path / "once"
    code, _, _ = cli("simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "1", "--out", str(run), "--quiet")
    assert code == 0
    before = (run / "samples" / "cycle-0001.jsonl").read_bytes()
    code, _, err = cli("simulate", "--scenario", "trio", "--out", str(run), "--quiet")
    assert code == 2 and "already holds a run" in err
    assert (run / "samples" / "cycle-0001.jsonl").read_bytes() == before


def _unlocked(path: Path) -> bool:
    conn = sqlite3.connect(path, timeout=0)
    try:
        conn.execute("BEGIN IMMEDIATE")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def test_a_run_cancelled_in_process_finishes_its_last_writes_and_leaves_the_checkpoint_unlocked(tmp_path):
    """A cancelled stream can return while the saver's writes still run (LangGraph does not wait for them): the
    checkpointer waits, so what they wrote is kept and a resume in the same process is not refused a lock."""
    from amphoreus_graph.society.checkpointer import checkpointer

    path = tmp_path / "checkpoint.sqlite"
    thread = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}

    async def cancelled_while_writing() -> None:
        async with checkpointer(path) as saver:
            await saver.setup()
            writing = asyncio.create_task(saver.aput_writes(thread, [("channel", "value")], "task-1"))
            await asyncio.sleep(0)  # the write has begun: it is in flight when the run stops
            assert not writing.done()
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled_while_writing())
    assert _unlocked(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT task_id, channel FROM writes").fetchall() == [("task-1", "channel")]


WRITE = "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel) VALUES (?,?,?,?,?,?)"


def test_a_write_left_open_beside_a_live_statement_is_undone_not_left_holding_the_lock(tmp_path):
    from amphoreus_graph.society.checkpointer import checkpointer

    path = tmp_path / "checkpoint.sqlite"
    cursors: list[object] = []  # as a cancelled task's traceback would keep it

    async def stopped_mid_write() -> None:
        async with checkpointer(path) as saver:
            await saver.setup()
            await saver.conn.execute(WRITE, ("t", "", "c", "task-1", 0, "channel"))
            cursors.append(await saver.conn.execute("SELECT * FROM writes"))  # a read not yet stepped to its end
            raise asyncio.CancelledError  # before any commit

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(stopped_mid_write())
    assert _unlocked(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM writes").fetchone() == (0,)
