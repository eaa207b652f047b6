"""A resumed run goes on from its own past or says why not: every shard and the memory store are checked against
what the checkpoint says they hold (society/ledger.py), and a run is itself wherever its directory goes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.memory.store import MemorySpec, open_memory
from tests.test_faults import ARGS, _assert_one_error_line, _cli, _files, _summary


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """One finished run, never touched: every case works on a copy of it."""
    run = tmp_path_factory.mktemp("reference") / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(run))
    assert code == 0, output
    return run


@pytest.fixture
def copy(reference, tmp_path) -> Path:
    return Path(shutil.copytree(reference, tmp_path / "run"))


def _checkpoint(run: Path) -> bytes:
    return (run / "checkpoint.sqlite").read_bytes()


def _edit_line(path: Path, line: int, old: bytes, new: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    assert old in lines[line]
    lines[line] = lines[line].replace(old, new, 1)
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize(
    ("shard", "old", "new"),
    [
        ("samples/cycle-0001.jsonl", b'"Cyrene"', b'"Cyrenf"'),  # same length, still valid JSON
        ("samples/cycle-0002.jsonl", b'"round": 2', b'"round": 9'),
        ("chronicle/cycle-0001.jsonl", b'"round": 2', b'"round": 9'),
    ],
    ids=["renamed-agent", "sample-round", "chronicle-round"],
)
def test_a_committed_line_edited_into_other_valid_json_is_rebuilt_exactly(reference, copy, shard, old, new):
    line = 1 if shard.startswith("chronicle") else 4
    _edit_line(copy / shard, line, old, new)
    code, output = _cli("simulate", "--resume", str(copy))
    assert code == 0, output
    assert "warning: repaired" in output and "was changed" in output, output
    assert _files(copy) == _files(reference)
    assert _summary(copy) == _summary(reference)


def test_a_deleted_memory_store_is_refused_in_one_line_and_nothing_changes(copy):
    shutil.rmtree(copy / "memory")
    before, checkpoint, config = _files(copy), _checkpoint(copy), (copy / "config.json").read_bytes()
    code, output = _cli("simulate", "--resume", str(copy), "--max-calls", "5")  # a new budget is not saved either
    _assert_one_error_line(code, output, "holds none of society 'run'", "--fresh-memory")
    assert _files(copy) == before and _checkpoint(copy) == checkpoint
    assert (copy / "config.json").read_bytes() == config


def test_an_emptied_memory_store_is_refused_in_one_line(copy):
    memory = open_memory(MemorySpec(directory=copy / "memory"), "run", load_scenario("trio").agent_names)
    memory.drop()  # every record gone, the run's claim kept
    memory.close()
    before, checkpoint = _files(copy), _checkpoint(copy)
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, "holds 0 records", "the run's checkpoint says")
    assert _files(copy) == before and _checkpoint(copy) == checkpoint


STOP_AT = """
import asyncio, sys
from pathlib import Path
from amphoreus_graph.errors import RunStopped
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.runner import RunConfig, Simulation
run, cycle, round_ = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if (run / "config.json").exists():
    sim = Simulation.resume(run, limits={"stop_after": (cycle, round_)})
else:
    limits = Limits(stop_after=(cycle, round_))
    sim = Simulation(RunConfig(scenario="trio", cycles=2, rounds=3, seed=3, out=run, limits=limits))
try:
    asyncio.run(sim.run(resume=(run / "checkpoint.sqlite").exists()))
except RunStopped:
    sys.exit(3)
"""


def _run_to(run: Path, cycle: int, round_: int) -> int:
    """Run (or resume) in a process of its own (Chroma keeps an open store's state per process), stopping after
    (cycle, round)."""
    return subprocess.run([sys.executable, "-c", STOP_AT, str(run), str(cycle), str(round_)], check=False).returncode


def test_a_store_restored_from_an_older_copy_is_refused(tmp_path):
    run = tmp_path / "run"
    assert _run_to(run, 1, 2) == 3
    older = Path(shutil.copytree(run / "memory", tmp_path / "older-memory"))
    assert _run_to(run, 2, 1) == 3
    config = json.loads((run / "config.json").read_text())
    config["limits"]["stop_after"] = None  # the resume below would go on to the end
    (run / "config.json").write_text(json.dumps(config))
    shutil.rmtree(run / "memory")
    shutil.copytree(older, run / "memory")
    before = _files_present(run)
    code, output = _cli("simulate", "--resume", str(run))
    _assert_one_error_line(code, output, "the run's checkpoint says", "--fresh-memory")
    assert _files_present(run) == before


def _files_present(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in run.glob("*/cycle-*.jsonl")}
