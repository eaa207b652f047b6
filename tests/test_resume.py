"""`kill -9` in the middle of `amphoreus simulate`, then `--resume`: nothing lost, nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amphoreus_graph.memory.embedder import default_embedder
from amphoreus_graph.memory.store import ChromaMemory, open_chroma
from amphoreus_graph.scenario import load_scenario

ARGS = ["--scenario", "amphoreus", "--cycles", "2", "--rounds", "3", "--seed", "5", "--quiet"]


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
    client, lock = open_chroma(run / "memory")
    memory = ChromaMemory(client, run.name, load_scenario("amphoreus").heir_names, default_embedder(), lock)
    try:
        return memory.dump()
    finally:
        memory.close()


@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path):
    killed, clean = tmp_path / "killed" / "run", tmp_path / "clean" / "run"
    reference = _simulate(*ARGS, "--out", str(clean))

    victim = _simulate(*ARGS, "--out", str(killed))
    deadline = time.monotonic() + 180
    while _lines(killed) < 18 and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert victim.poll() is None, "the run finished before it could be killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    written_before_kill = _lines(killed)
    assert 0 < written_before_kill < 72

    resumed = _simulate("--resume", str(killed))
    out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, out.decode()
    out, _ = reference.communicate(timeout=300)
    assert reference.returncode == 0, out.decode()

    for folder in ("samples", "chronicle"):
        shards = sorted((clean / folder).iterdir())
        assert shards, folder
        for shard in shards:
            assert (killed / folder / shard.name).read_bytes() == shard.read_bytes(), f"{folder}/{shard.name}"
    assert _lines(killed) == 72
    assert _memory(killed) == _memory(clean)


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
