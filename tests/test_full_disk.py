"""A disk that fills up, an option that no checkpoint can hold: one line and a resumable run, never a hang."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_faults import ARGS, _assert_one_error_line, _cli


@pytest.fixture
def small_disk(tmp_path):
    """A 400 KB tmpfs: a trio run of two cycles needs about twice that."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _shards(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.glob("*/cycle-*.jsonl"))}


def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_exactly(small_disk, tmp_path):
    run = small_disk / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(run), "--memory-dir", str(tmp_path / "memory"))
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 3 and len(errors) == 1 and "Traceback" not in output, output
    assert str(run) in errors[0] and "bytes free" in errors[0], errors[0]
    moved = Path(shutil.move(run, tmp_path / "room"))  # room again: the run goes on where it stopped
    code, output = _cli("simulate", "--resume", str(moved))
    assert code == 0, output
    reference = tmp_path / "reference" / "run"
    code, output = _cli("simulate", *ARGS, "--out", str(reference), "--memory-dir", str(tmp_path / "memory-2"))
    assert code == 0, output
    assert _shards(moved) == _shards(reference)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["simulate", *ARGS, "--seed", str(2**64)], "--seed"),
        (["simulate", *ARGS, "--seed", str(-(2**63) - 1)], "--seed"),
        (["simulate", *ARGS, "--rounds", str(10**12)], "--rounds"),
        (["simulate", *ARGS, "--cycles", str(10**12)], "--cycles"),
        (["simulate", *ARGS, "--max-concurrency", str(10**12)], "--max-concurrency"),
        (["judge", "RUN", "--seed", str(2**64)], "--seed"),
        (["bench", "--seed", str(2**64)], "--seed"),
    ],
)
def test_a_number_no_checkpoint_can_hold_is_refused_in_one_line(tmp_path, args, needle):
    out = tmp_path / "out"
    code, output = _cli(*[{"RUN": str(tmp_path / "run")}.get(a, a) for a in args], "--out", str(out))
    _assert_one_error_line(code, output, needle)
    assert not out.exists()
