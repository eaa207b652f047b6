"""The install: `make run` sets up only what a simulation needs, one quiet line per step; `make test` adds the dev
extras. A newcomer's first command should not fetch Ray, TRL or a browser before it simulates anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DEV_ONLY = {"ray", "trl", "playwright", "mypy", "pytest", "hypothesis", "ruff", "import-linter", "langgraph-cli"}


def planned(target: str, venv: Path) -> str:
    """The commands `make TARGET` would run against a virtualenv that does not exist yet."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"VENV={venv}"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_the_package_without_extras_and_make_test_adds_dev(tmp_path: Path) -> None:
    run, test = planned("run", tmp_path / "v"), planned("test", tmp_path / "v")
    assert " -e .;" in run and "[dev]" not in run
    assert ' -e ".[dev]"' in test
    for plan in (run, test):  # pip's own output goes to the log; each step prints one line
        installs = [line for line in plan.splitlines() if "pip install" in line]
        assert installs and all(f">>{tmp_path / 'v' / 'install.log'} 2>&1" in line for line in installs)
        assert all(line.startswith('echo "  ') for line in installs)


@pytest.mark.slow
def test_a_runs_dependencies_hold_no_dev_tool(tmp_path: Path) -> None:
    """What pip would install for `-e .` into an empty environment (resolved, not installed)."""
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed"]
    done = subprocess.run(
        [*pip, "--report", str(report), "-e", str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert "amphoreus-graph" in names and "chromadb" in names
    assert not names & DEV_ONLY, sorted(names & DEV_ONLY)
