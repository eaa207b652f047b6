"""A store that fails under a running society: its disk full, its Chroma server killed. Each ends in one `error:`
line naming the store and what happened, exit 3, the run checkpointed; a `--resume` once the fault is gone gives
the samples an uninterrupted run gives."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amphoreus_graph.cli import app
from tests.chroma_server import chroma_process, free_port
from tests.conftest import REPO, digests

SHARDS = ("samples/cycle-0001.jsonl", "chronicle/cycle-0001.jsonl")


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def _one_error_line(code: int, output: str, *needles: str) -> None:
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 3, output[-3000:]
    assert len(errors) == 1 and "Traceback" not in output, output[-3000:]
    for needle in needles:
        assert needle in errors[0], errors[0]


def _same_shards(run: Path, reference: Path) -> None:
    for shard in SHARDS:
        assert (run / shard).read_bytes() == (reference / shard).read_bytes(), shard


@contextmanager
def _small_disk(where: Path, size: str) -> Iterator[None]:
    """A tmpfs of `size` mounted at `where` (root only; skipped elsewhere), unmounted afterwards."""
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=True)  # even if a process still holds a file there


def test_a_full_disk_under_the_store_stops_the_run_in_one_line_and_a_resume_finishes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "3", "--seed", "3", "--quiet"]
    assert _cli(*args, "--out", "clean/run")[0] == 0
    with _small_disk(tmp_path / "disk", "400k"):
        code, output = _cli(*args, "--out", "full/run", "--memory-dir", "disk/memory")
        _one_error_line(code, output, "disk/memory: the disk is full", "bytes free", "--resume")
        assert (tmp_path / "full/run/checkpoint.sqlite").is_file()
        subprocess.run(["mount", "-o", "remount,size=8m", str(tmp_path / "disk")], check=True)  # space freed
        code, output = _cli("simulate", "--resume", "full/run", "--quiet")
        assert code == 0, output
    _same_shards(tmp_path / "full/run", tmp_path / "clean/run")


def test_a_store_that_cannot_open_on_a_full_disk_is_an_outside_fault_and_changes_nothing(tmp_path, monkeypatch):
    """Chroma writes as it opens a store (and the package with it: the write log's setting, its compaction): on a
    full disk the resume is one line saying so, exit 3 (not "expected a Chroma store", exit 2); nothing of the run
    changes, and once there is room the same resume goes on."""
    monkeypatch.chdir(tmp_path)
    args = ["simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "3", "--seed", "3", "--quiet"]
    with _small_disk(tmp_path / "disk", "8m"):
        assert _cli(*args, "--out", "run", "--memory-dir", "disk/memory")[0] == 0
        with open(tmp_path / "disk" / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:  # the disk filled by something else
                filler.write(bytes(1 << 16))
        before = digests(tmp_path / "run"), digests(tmp_path / "disk" / "memory")
        code, output = _cli("simulate", "--resume", "run", "--quiet")
        _one_error_line(code, output, "disk/memory: the disk is full", "bytes free", "--resume")
        assert (digests(tmp_path / "run"), digests(tmp_path / "disk" / "memory")) == before
        (tmp_path / "disk" / "filler").unlink()
        code, output = _cli("simulate", "--resume", "run", "--quiet")  # in the same process, as a library's user
        assert code == 0, output


def _simulate(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    command = [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *args]
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_a_chroma_server_killed_mid_run_stops_it_in_one_line_and_a_resume_finishes_it(tmp_path):
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "6", "--seed", "3", "--quiet"]
    assert _cli("simulate", *args, "--out", str(tmp_path / "clean" / "run"))[0] == 0
    port, data = free_port(), tmp_path / "server"
    data.mkdir()
    with chroma_process(data, port) as (url, server):
        run = _simulate(*args, "--out", "run", "--chroma-url", url, cwd=tmp_path)
        samples = tmp_path / "run" / SHARDS[0]
        deadline = time.monotonic() + 120
        while run.poll() is None and time.monotonic() < deadline:
            if samples.exists() and len(samples.read_bytes().splitlines()) >= 6:  # two rounds of three turns
                break
            time.sleep(0.02)
        os.killpg(server.pid, signal.SIGKILL)
        output = run.communicate(timeout=120)[0]
    assert len(samples.read_bytes().splitlines()) < 18, "the run ended before the server was killed"
    _one_error_line(run.returncode, output, f"Chroma server 127.0.0.1:{port}", "stopped answering", "--resume")
    with chroma_process(data, port):  # the same server again, on the same path and port
        resumed = _simulate("--resume", "run", "--quiet", cwd=tmp_path)
        output = resumed.communicate(timeout=300)[0]
    assert resumed.returncode == 0, output
    _same_shards(tmp_path / "run", tmp_path / "clean" / "run")
