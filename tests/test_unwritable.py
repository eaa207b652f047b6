"""Places a command cannot write: a name longer than the filesystem allows, a file where a folder is meant, a run
(or one of its files) that is read-only or immutable. Each is one `error:` line (exit 2) before any work, with
nothing already written changed; and what only reads a run (report --out elsewhere, interview) reads a read-only
one and changes nothing in a writable one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amphoreus_graph.cli import app

TRIO = ["--scenario", "trio", "--cycles", "1", "--rounds", "2", "--quiet"]
LONG = "x" * 300  # over the 255 bytes a name may have on ext4, xfs, btrfs, tmpfs


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def _one_error_line(code: int, output: str, *needles: str) -> str:
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in output, output
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def _state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder`: its bytes and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}  # fmt: skip


@contextmanager
def unwritable(path: Path, *, recursive: bool = False) -> Iterator[None]:
    """`path` (and, `recursive`, all under it) made unwritable for this process: immutable (`chattr +i`) for root,
    whom file modes do not stop; read-only modes otherwise. Undone afterwards."""
    if os.geteuid() != 0:
        targets = [path, *(path.rglob("*") if recursive else [])]
        modes = {p: p.stat().st_mode for p in targets}
        for p in targets:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p in reversed(targets):
                p.chmod(modes[p])
        return
    flags = ["-R"] if recursive else []
    if shutil.which("chattr") is None or subprocess.run(["chattr", *flags, "+i", str(path)]).returncode != 0:
        pytest.skip("root, and no `chattr +i` here to make a file unwritable")
    try:
        yield
    finally:
        subprocess.run(["chattr", *flags, "-i", str(path)], check=True)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished trio run and an offline judge's folder beside it."""
    home = tmp_path_factory.mktemp("unwritable")
    code, output = _cli("simulate", *TRIO, "--out", str(home / "run"))
    assert code == 0, output
    code, output = _cli("judge", str(home / "run"), "--out", str(home / "judged"), "--max-turns", "4", "-k", "1")
    assert code == 0, output
    return home


@pytest.mark.parametrize(
    "command",
    [
        ["simulate", *TRIO],
        ["export", "sft", "run"],
        ["export", "dpo", "judged"],
        ["judge", "run", "--max-turns", "2", "-k", "1"],
        ["bench", "--model", "offline", "--tasks", "path_choice"],
    ],
    ids=["simulate", "export sft", "export dpo", "judge", "bench"],
)
def test_an_out_name_over_255_bytes_is_one_line(finished, tmp_path, monkeypatch, command):
    home = tmp_path / "home"
    shutil.copytree(finished, home)
    monkeypatch.chdir(home)
    before = _state(home)
    code, output = _cli(*command, "--out", f"datasets/{LONG}")
    _one_error_line(code, output, "--out", "300 bytes", "at most 255")
    assert _state(home) == before and not (home / "datasets").exists()


@pytest.mark.parametrize("kind", ["sft", "dpo"])
def test_export_out_naming_a_file_is_one_line_and_the_file_stays(finished, tmp_path, monkeypatch, kind):
    monkeypatch.chdir(finished)
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    code, output = _cli("export", kind, "run" if kind == "sft" else "judged", "--out", str(target))
    _one_error_line(code, output, f"--out {target}", "not a directory")
    assert target.read_text() == "mine\n"


@pytest.fixture
def stopped(tmp_path) -> Path:
    """A run stopped by its budget after its first round: resumable."""
    run = tmp_path / "stopped"
    budget = ["--model", "scripted:seed=4", "--max-calls", "3"]
    code, output = _cli("simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "3", "--quiet", *budget,
                        "--out", str(run))  # fmt: skip
    assert code == 3 and "budget spent" in output, output
    return run


@pytest.mark.parametrize("place", ["samples/cycle-0001.jsonl", "chronicle/cycle-0001.jsonl", "samples"])
def test_an_unwritable_file_of_a_run_is_named_in_one_line_at_resume(stopped, place):
    """Found before the resumed run asks its model anything: not halfway through the next round, after its calls."""
    before = _state(stopped)
    with unwritable(stopped / place):
        code, output = _cli("simulate", "--resume", str(stopped), "--quiet")
    _one_error_line(code, output, f"{stopped / place}: cannot be written")
    assert _state(stopped) == before
    code, output = _cli("simulate", "--resume", str(stopped), "--max-calls", "1000", "--quiet")
    assert code == 0, output


def test_report_on_a_read_only_run_says_so_and_writes_elsewhere_with_out(finished, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished / "run", run)
    before = _state(run)
    with unwritable(run, recursive=True):
        code, output = _cli("report", str(run), "--no-alignment")
        _one_error_line(code, output, str(run / "report.html"), "read-only", "--out FILE")
        code, output = _cli("report", str(run), "--no-alignment", "--out", str(tmp_path / "page.html"))
    assert code == 0, output
    assert _state(run) == before
    page = (tmp_path / "page.html").read_text()
    assert "cannot open the memory store" not in page and "Cyrene" in page


def test_interview_reads_a_run_without_changing_it_and_reads_a_read_only_one(finished, tmp_path):
    """Chroma and LangGraph's saver write to what they open; the interview opens copies: the run's files keep
    their bytes and times, and an immutable run answers the same."""
    run = tmp_path / "run"
    shutil.copytree(finished / "run", run)
    before = _state(run)
    asked = ["interview", str(run), "What do you remember of the city?", "--agent", "Cyrene", "--json"]
    code, output = _cli(*asked)
    assert code == 0, output
    assert _state(run) == before
    with unwritable(run, recursive=True):
        code, again = _cli(*asked)
    assert code == 0, again
    assert json.loads(again)["answer"] == json.loads(output)["answer"]
    assert json.loads(again)["memories"]
