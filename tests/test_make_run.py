"""`make run`: the default 12-agent society through 2 cycles, with its closing summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_make_run_completes_and_prints_the_summary(tmp_path):
    venv = Path(sys.prefix)
    if not list(venv.glob(".installed-*")):
        pytest.skip("tests are not running in a venv that `make` set up (run them with `make test`)")
    run = tmp_path / "make-run"
    # as from a shell where the virtualenv is not activated (a fresh clone's first `make run`)
    bare = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")} | {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["make", "--no-print-directory", "run", f"VENV={venv}", f"RUN_ARGS=--out {run}"],
        cwd=REPO,
        env=bare,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert [c["cycle"] for c in summary["cycles"]] == [1, 2]
    turns = 12 * sum(c["rounds"] for c in summary["cycles"])
    assert summary["samples_written"] == turns and summary["fallbacks"] == 0
    assert f"most {summary['score_label']}:" in done.stdout and f"samples {turns}" in done.stdout
    assert all(c["text"].split()[0] in done.stdout for c in summary["cycles"]), "how each cycle ended, in its words"
    assert sum(1 for _ in (run / "samples").glob("cycle-*.jsonl")) == 2
    # The closing hint runs as printed from a new shell.
    hint = next(line for line in done.stdout.splitlines() if line.startswith("see it: ")).removeprefix("see it: ")
    assert hint.endswith(" --open")
    shown = subprocess.run(
        ["bash", "-c", hint.removesuffix(" --open")], cwd=REPO, env=bare, capture_output=True, text=True, timeout=300
    )
    assert shown.returncode == 0 and (run / "report.html").is_file(), shown.stdout + shown.stderr
