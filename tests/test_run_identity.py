"""A run knows itself: its identity is in its config, not its folder's name, and one process at a time writes it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_faults import ARGS, _assert_one_error_line, _cli, _run_to

REPO = Path(__file__).resolve().parents[1]


def _shards(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.glob("*/cycle-*.jsonl"))}


def test_a_copied_and_renamed_run_resumes_as_itself_byte_for_byte(tmp_path):
    run = tmp_path / "run"
    assert _run_to(run, 1, 2) == 3
    renamed = Path(shutil.copytree(run, tmp_path / "elsewhere" / "renamed", symlinks=True))
    for directory in (run, renamed):
        config = json.loads((directory / "config.json").read_text())
        config["limits"]["stop_after"] = None
        (directory / "config.json").write_text(json.dumps(config))
        code, output = _cli("simulate", "--resume", str(directory))
        assert code == 0, output
    assert _shards(renamed) == _shards(run)
    assert json.loads((renamed / "summary.json").read_text())["run"] == "run"


def test_a_run_from_before_runs_named_themselves_keeps_its_name_when_moved(tmp_path):
    run = tmp_path / "run"
    assert _run_to(run, 1, 2) == 3
    config = json.loads((run / "config.json").read_text())
    config["name"] = None  # as configs were written before
    config["limits"]["stop_after"] = None
    (run / "config.json").write_text(json.dumps(config))
    reference = Path(shutil.copytree(run, tmp_path / "reference" / "run"))
    moved = run.rename(tmp_path / "moved")
    code, output = _cli("simulate", "--resume", str(moved))
    assert code == 0, output
    code, output = _cli("simulate", "--resume", str(reference))
    assert code == 0, output
    assert _shards(moved) == _shards(reference)


def test_a_copy_over_the_same_shared_store_is_refused_and_pointed_to_fork(tmp_path):
    store = tmp_path / "shared-memory"
    run = tmp_path / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(run), "--memory-dir", str(store))
    assert code == 0, output
    copy = Path(shutil.copytree(run, tmp_path / "copies" / "run"))
    before = _shards(copy)
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, "is a copy", "--fork")
    assert _shards(copy) == before

    moved = run.rename(tmp_path / "moved")  # the original gone from where the store knew it: a move, not a copy
    shutil.rmtree(copy)
    code, output = _cli("simulate", "--resume", str(moved))
    assert code == 0, output


SLOW = ["--model", "scripted:latency=0.8"]  # each round takes a while: the first is still running when the other asks


def _simulate(out: Path, memory: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *ARGS, *SLOW, "--out", str(out)]
    return subprocess.Popen(
        [*command, "--memory-dir", str(memory)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
def test_two_processes_started_together_on_one_out_one_runs_the_other_is_refused(tmp_path):
    out = tmp_path / "run"
    both = [_simulate(out, tmp_path / f"memory-{n}") for n in ("a", "b")]
    outputs = [process.communicate(timeout=300)[0] for process in both]
    codes = sorted(process.returncode for process in both)
    assert codes == [0, 2], outputs
    refused = outputs[[p.returncode for p in both].index(2)]
    errors = [line for line in refused.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "in use by another running process" in errors[0], refused
    solo = tmp_path / "solo" / "run"
    code, output = _cli("simulate", *ARGS, *SLOW, "--out", str(solo))
    assert code == 0, output
    assert _shards(out) == _shards(solo), "the run's shards hold its rows alone"
