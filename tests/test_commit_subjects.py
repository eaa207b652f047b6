"""tools/commit_subjects.py: what `make lint` asks of a commit message, and a clone it cannot fully check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import commit_subjects  # noqa: E402


def test_a_short_subject_a_blank_line_and_a_body_pass() -> None:
    assert commit_subjects.problems("Gateway: one transport\n\nWhy it changed, and what it cost.\n") == []


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("x" * 73 + "\n\nbody", ["subject is 73 characters (at most 72)"]),
        ("Subject\nbody at once", ["no blank line after the subject"]),
        ("Subject only\n", ["no body (say why, and any figures)"]),
        ("Subject\n\n# a comment git strips\n", ["no body (say why, and any figures)"]),
        ("\n", ["empty subject"]),
    ],
)
def test_each_fault_is_named(message: str, expected: list[str]) -> None:
    assert commit_subjects.problems(message) == expected


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


def test_a_clone_without_the_base_checks_what_it_has(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(
        tmp_path,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "A subject far too long for anyone scanning git log --oneline to read",
    )
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "commit_subjects.py")], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 1, result.stdout
    assert "not in this clone: commits dated after it" in result.stdout
    assert "no body" in result.stdout


def test_outside_a_repository_nothing_is_checked(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "commit_subjects.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0 and "no commits checked" in result.stdout


def test_as_a_commit_msg_hook(tmp_path: Path) -> None:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Fine subject\n\nA body.\n")
    assert commit_subjects.main([str(message)]) == 0
    message.write_text("Fine subject\n")
    assert commit_subjects.main([str(message)]) == 1
