"""Damaged files and mistaken commands: each ends in an exact repair or one `error:` line (exit 2) that changes
nothing, never in a quiet success with fewer or different samples."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.cli import app
from amphoreus_graph.memory.ownership import read_owner
from amphoreus_graph.memory.store import MemorySpec, open_memory

ARGS = ["--scenario", "trio", "--cycles", "2", "--rounds", "3", "--seed", "3", "--quiet"]
SHARDS = (
    "samples/cycle-0001.jsonl",
    "samples/cycle-0002.jsonl",
    "chronicle/cycle-0001.jsonl",
    "chronicle/cycle-0002.jsonl",
)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def _assert_one_error_line(code: int, output: str, *needles: str) -> None:
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2, output
    assert len(errors) == 1 and "Traceback" not in output, output
    for needle in needles:
        assert needle in errors[0], errors[0]


def _files(run: Path) -> dict[str, bytes]:
    return {name: (run / name).read_bytes() for name in SHARDS}


def _summary(run: Path) -> dict:
    return {k: v for k, v in json.loads((run / "summary.json").read_text()).items() if k != "wall_time_s"}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """One finished run (two cycles of three rounds), never touched: every case works on a copy of it."""
    run = tmp_path_factory.mktemp("reference") / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(run))
    assert code == 0, output
    return run


@pytest.fixture
def copy(reference, tmp_path) -> Path:
    """The reference run under another parent (same run name, so its memory store is its own)."""
    return Path(shutil.copytree(reference, tmp_path / "run"))


def _cut_last_line(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-7])


def _halve(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garble_first_line(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[5:25] = b"#" * 20
    path.write_bytes(bytes(data))


def _append_garbage(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(b'{"half a row": ')


def _remove(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize(
    ("shard", "damage"),
    [
        ("samples/cycle-0002.jsonl", _cut_last_line),
        ("samples/cycle-0001.jsonl", _halve),
        ("samples/cycle-0001.jsonl", _garble_first_line),
        ("samples/cycle-0002.jsonl", _append_garbage),
        ("samples/cycle-0001.jsonl", _remove),
        ("chronicle/cycle-0001.jsonl", _cut_last_line),
        ("chronicle/cycle-0002.jsonl", _garble_first_line),
    ],
    ids=[
        "torn-sample",
        "short-sample",
        "garbled-sample",
        "tail-garbage",
        "missing-sample",
        "torn-chronicle",
        "garbled-chronicle",
    ],
)
def test_a_damaged_shard_is_rebuilt_exactly_on_resume(reference, copy, shard, damage: Callable[[Path], None]):
    damage(copy / shard)
    code, output = _cli("simulate", "--resume", str(copy))
    assert code == 0, output
    assert _files(copy) == _files(reference)
    assert _summary(copy) == _summary(reference)
    if damage is not _append_garbage:  # uncommitted bytes are cut without a word: a crash leaves them every time
        assert "warning: repaired" in output and shard.split("/")[-1] in output


def test_a_shard_the_history_cannot_rebuild_is_refused_in_one_line(copy):
    """With the older checkpoints gone, only the last is left: a shortened shard cannot be rebuilt exactly."""
    with sqlite3.connect(copy / "checkpoint.sqlite") as db:
        (latest,) = db.execute("SELECT MAX(checkpoint_id) FROM checkpoints").fetchone()
        db.execute("DELETE FROM checkpoints WHERE checkpoint_id != ?", (latest,))
        db.execute("DELETE FROM writes WHERE checkpoint_id != ?", (latest,))
        db.execute("DELETE FROM row_digests WHERE checkpoint_id != ?", (latest,))  # as a tool that prunes them would
    _halve(copy / "samples/cycle-0001.jsonl")
    before = (copy / "samples/cycle-0001.jsonl").read_bytes()
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, "samples/cycle-0001.jsonl", "at byte", "cannot be repaired exactly")
    assert (copy / "samples/cycle-0001.jsonl").read_bytes() == before


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _scramble(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


@pytest.mark.parametrize(
    ("name", "damage", "needle"),
    [
        ("checkpoint.sqlite", _empty, "behind the memories"),
        ("checkpoint.sqlite", _scramble, "not a readable checkpoint"),
        ("checkpoint.sqlite", _remove, "no checkpoint to resume from"),
        ("config.json", _scramble, "config.json"),
        ("memory/chroma.sqlite3", _scramble, "chroma.sqlite3: not a readable Chroma database"),
    ],
    ids=["emptied-checkpoint", "corrupt-checkpoint", "missing-checkpoint", "corrupt-config", "corrupt-chroma"],
)
def test_a_damaged_run_file_is_one_line_and_nothing_changes(copy, name, damage, needle):
    damage(copy / name)
    before = _files(copy)
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, needle)
    assert _files(copy) == before


def test_a_stray_file_in_the_store_changes_nothing(reference, copy):
    (copy / "memory" / "stray.bin").write_bytes(os.urandom(1000))
    code, output = _cli("simulate", "--resume", str(copy))
    assert code == 0, output
    assert _files(copy) == _files(reference)


@pytest.mark.parametrize("damage", [_empty, _scramble, _remove], ids=["emptied", "corrupt", "missing"])
def test_a_lost_checkpoint_restarts_with_fresh_memory_as_a_clean_run(reference, copy, damage):
    damage(copy / "checkpoint.sqlite")
    code, output = _cli("simulate", "--resume", str(copy), "--fresh-memory")
    assert code == 0, output
    assert _files(copy) == _files(reference)
    assert _summary(copy) == _summary(reference)


def _memories(store: Path, society: str = "run") -> dict:
    """Every record of the society in an embedded store, by owner (Chroma rewrites its file on every open, so
    "untouched" is said of what the store holds, not of its bytes)."""
    memory = open_memory(MemorySpec(directory=store), society, load_scenario("trio").agent_names)
    try:
        return memory.dump() | {"owner": read_owner(memory.index)}
    finally:
        memory.close()


def test_a_second_run_on_an_owned_store_is_refused_and_the_store_untouched(reference, copy, tmp_path):
    store = copy / "memory"
    before = _memories(store)
    other = tmp_path / "elsewhere" / "run"  # the same run name, so the same society in that store
    code, output = _cli("simulate", *ARGS, "--out", str(other), "--memory-dir", str(store))
    _assert_one_error_line(code, output, str(copy), "--fresh-memory")
    assert _memories(store) == before
    assert not (other / "samples").exists()

    code, output = _cli("simulate", *ARGS, "--out", str(other), "--memory-dir", str(store), "--fresh-memory")
    assert code == 0, output
    assert _files(other) == _files(reference)


def test_a_resume_over_another_runs_memories_is_refused(copy, tmp_path):
    other = tmp_path / "second" / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(other))
    assert code == 0, output
    config = json.loads((copy / "config.json").read_text())
    config["memory_dir"] = str(other / "memory")
    (copy / "config.json").write_text(json.dumps(config))
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, str(other), "--fresh-memory")


def test_bad_rows_are_one_line_or_skipped_with_a_warning(reference, copy, tmp_path):
    code, output = _cli("export", "sft", str(reference), "--out", str(tmp_path / "clean"))
    assert code == 0, output
    clean = (tmp_path / "clean" / "train.jsonl").read_text().splitlines()
    shard = copy / "samples/cycle-0001.jsonl"
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(b"".join([lines[0], b'{"id": "torn\n', *lines[1:]]))
    for command in (["export", "sft", str(copy), "--out", str(tmp_path / "sft")], ["report", str(copy)]):
        code, output = _cli(*command)
        _assert_one_error_line(code, output, f"{shard}:2", "--skip-bad-rows")
    code, output = _cli("export", "sft", str(copy), "--out", str(tmp_path / "sft"), "--skip-bad-rows")
    assert code == 0 and f"warning: {shard}:2" in output, output
    assert (tmp_path / "sft" / "train.jsonl").read_text().splitlines() == clean  # every good row, the torn one out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["simulate", "--cycles", "0"], "--cycles"),
        (["simulate", "--rounds", "many"], "--rounds"),
        (["simulate", "--no-such-option"], "--no-such-option"),
        (["export", "sft", "RUN", "--out", "OUT", "--path", "Remembrence"], "--path 'Remembrence'"),
        (["export", "sft", "RUN", "--out", "OUT", "--agent", "Cyrne"], "--agent 'Cyrne'"),
        (["simulate", *ARGS, "--out", "OUT", "--seeds-dir", "no/such/seeds"], "--seeds-dir"),
        (["simulate", *ARGS, "--out", "A_FILE"], "not a directory"),
        (["simulate", *ARGS, "--out", "A_FILE/run"], "--out"),
        (["simulate", *ARGS, "--out", "OUT", "--memory-dir", "A_FILE"], "--memory-dir"),
        (["simulate", *ARGS, "--out", "/proc/amphoreus-run"], "cannot write there"),
        (["simulate", *ARGS, "--out", "OUT", "--model", "scripted:quote=0.5"], "scripted:quote=0.5"),
        (["simulate", *ARGS, "--out", "OUT", "--chroma-url", "http://127.0.0.1:9"], "cannot open the memory store"),
    ],
)
def test_a_mistaken_command_is_one_line(copy, tmp_path, args, needle):
    (tmp_path / "A_FILE").write_text("not a directory")
    swap = {"RUN": str(copy), "OUT": str(tmp_path / "out"), "A_FILE": str(tmp_path / "A_FILE")}
    resolved = [swap.get(a, a.replace("A_FILE", str(tmp_path / "A_FILE"))) for a in args]
    code, output = _cli(*resolved)
    _assert_one_error_line(code, output, needle)
    assert not (tmp_path / "out" / "train.jsonl").exists()


# A resumed run goes on from its own past or says why not: every shard and the memory store are checked against
# what the checkpoint says they hold (society/ledger.py).


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


def test_a_checkpoint_whose_bytes_changed_inside_a_valid_file_is_refused(copy):
    """SQLite's own checks see only its pages: a flipped byte in a serialized state is other valid state, which a
    resume would go on from. The digest kept beside each row tells it."""
    with sqlite3.connect(copy / "checkpoint.sqlite") as db:
        checkpoint_id, blob = db.execute(
            "SELECT checkpoint_id, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
        changed = bytearray(blob)
        changed[len(changed) // 2] ^= 0x01
        db.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (bytes(changed), checkpoint_id))
    before, checkpoint = _files(copy), _checkpoint(copy)
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, "checkpoint.sqlite: damaged", checkpoint_id, "--fresh-memory")
    assert _files(copy) == before and _checkpoint(copy) == checkpoint


def test_a_memory_row_that_no_longer_holds_its_records_is_refused(copy):
    with sqlite3.connect(copy / "memory" / "chroma.sqlite3") as db:
        (row,) = db.execute("SELECT id FROM embedding_metadata WHERE key = 'records' LIMIT 1").fetchone()
        lost = json.dumps([{"cycle": 1}])  # a record with its fields gone
        db.execute("UPDATE embedding_metadata SET string_value = ? WHERE id = ? AND key = 'records'", (lost, row))
    before = _files(copy)
    code, output = _cli("simulate", "--resume", str(copy))
    _assert_one_error_line(code, output, "does not hold records as they were written", "--fresh-memory")
    assert _files(copy) == before
