"""benchmarks/scale.py stopped by its caps: what it finished is reported, not lost with the run."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.sampler import Profile, Sampler
from benchmarks.scale import Progress
from tests.conftest import REPO

FIELDS = {
    "agents",
    "attention",
    "stopped",
    "setup",
    "rounds",
    "turns",
    "ms_per_turn",
    "cpu_ms_per_turn",
    "unfinished_round",
    "checkpoint_growth_bytes_per_round",
    "largest_checkpoint_bytes",
    "last_checkpoint_bytes",
    "memory_store_bytes",
    "peak_rss_bytes",
    "per_round",
    "profile",
}


def test_a_run_cut_short_keeps_the_rounds_it_finished(tmp_path: Path):
    sampler = Sampler(0.01, tmp_path, 2**40, 2**40)
    progress = Progress(12, 1, 3, None, tmp_path / "run")
    progress.round_started(sampler)
    for turns in (12, 12, 5):  # two rounds finished, the third cut off after 5 turns
        for _ in range(turns):
            progress.turns += 1
        if turns == 12:
            time.sleep(0.01)
            progress.round_done(1, sampler)
            progress.round_started(sampler)
    writes = SimpleNamespace(calls=Counter(upsert=2))
    report = progress.report(writes, sampler, "time cap (9 s)", mid_round=True)  # type: ignore[arg-type]

    assert set(report) >= FIELDS
    assert report["stopped"] == "time cap (9 s)"
    assert report["rounds"] == len(report["per_round"]) == 2 and report["turns"] == 24
    assert report["unfinished_round"]["turns"] == 5
    second = report["per_round"][1]
    assert report["ms_per_turn"] == pytest.approx(1000 * second["wall_s"] / 12, rel=1e-3)  # the steady round's
    assert report["chroma_writes_per_turn"] == round(2 / 24, 3)
    assert report["setup"]["wall_s"] >= 0 and report["setup"]["profile"]["cumulative"] == []


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _first_round_work() -> None:
    _spin(0.3)


def _second_round_work() -> None:
    _spin(0.3)


def test_each_round_has_its_own_profile_and_the_run_has_all_of_them(tmp_path: Path):
    """Each round's profile weighs that round's work alone, the run's weighs both. Read from the profiles' own
    counters, not their top-12 tables: other tests' threads still running in the process may fill a table."""
    sampler = Sampler(0.005, tmp_path, 2**40, 2**40)
    sampler.start()
    rounds = []
    try:
        progress = Progress(12, 1, 3, None, tmp_path / "run")
        progress.round_started(sampler)
        for work in (_first_round_work, _second_round_work):
            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            rounds.append(sampler.round)  # the profile `round_done` hands over
            progress.round_done(1, sampler)
            progress.round_started(sampler)
        whole = sampler.whole
    finally:
        sampler.halt.set()

    def weighed(profile: Profile) -> set[str]:
        return {where.rsplit(":", 1)[1] for where, cpu in profile.cumulative.items() if cpu > 0}

    first, second = (weighed(p) for p in rounds)
    assert "_first_round_work" in first and "_second_round_work" not in first
    assert "_second_round_work" in second and "_first_round_work" not in second
    assert {"_first_round_work", "_second_round_work"} <= weighed(whole)
    assert all(r["profile"]["python_threads_cpu_s"] > 0 for r in progress.rounds)


def test_a_run_stopped_before_its_first_round_reports_its_setup(tmp_path: Path):
    sampler = Sampler(0.01, tmp_path, 2**40, 2**40)
    report = Progress(12, 1, 3, None, tmp_path / "run").report(
        SimpleNamespace(calls=Counter()),  # type: ignore[arg-type]
        sampler,
        "memory cap",
        mid_round=True,
    )
    assert report["rounds"] == 0 and report["ms_per_turn"] is None and report["profile"] is None
    assert report["setup"]["unfinished"] and report["unfinished_round"] is None


@pytest.mark.slow
def test_the_smallest_size_under_a_tiny_cap_reports_its_partial_figures():
    smallest = ["--agents", "12", "--no-crowd", "--cycles", "0"]
    done = subprocess.run(
        [sys.executable, "benchmarks/scale.py", *smallest, "--cap", "1", "--json", "--no-save"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(done.stdout.strip().splitlines()[-1])["attentive"]
    assert set(row) >= FIELDS and row["stopped"] == "time cap (1 s)"
    assert row["rounds"] == len(row["per_round"]) and row["turns"] == sum(r["turns"] for r in row["per_round"])
    assert row["peak_rss_bytes"] > 0 and row["wall_s"] < 60


def test_a_size_whose_process_fails_is_a_row_saying_so_and_the_table_goes_on():
    """A measurement that dies (here: a society of no agents, which the scenario loader refuses) must not take
    the other sizes' figures with it."""
    from benchmarks.scale import Limits, in_a_fresh_process, table

    row = in_a_fresh_process(0, 1, 3, 12, Limits(cap_s=60))
    assert row["failed"] and row["agents"] == 0 and row["sight"] == 12
    assert "0 agents  failed" in table({"attentive": [row]})


def test_the_profile_counts_every_threads_cpu_by_its_os_name(tmp_path: Path):
    """Native threads (Chroma's Rust runtime, ONNX Runtime's pool) do not show in Python's stacks: their CPU is
    reported by thread name, from the sampler's start (a 1,000-agent round's Chroma insert was found so)."""
    sampler = Sampler(0.01, tmp_path, 2**40, 2**40)
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    assert sum(sampler.summary()["cpu_s_by_thread_name"].values()) >= 0.2  # this thread, under its process's name
