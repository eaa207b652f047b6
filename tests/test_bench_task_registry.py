"""A benchmark task registered by another package (its own entry point) is listed, run and scored on the
leaderboard like a packaged one; a packaged name is never replaced."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amphoreus_graph.bench.leaderboard import PACKAGED_TASKS, bench_model, task_names, tasks
from amphoreus_graph.bench.tasks.base import BenchSettings

SITE = Path(__file__).parent / "outside_task" / "site"  # what `pip install outside-task` would leave


def test_an_outside_task_is_listed_only_once_installed(monkeypatch):
    assert "steadiness" not in task_names(["all"])
    monkeypatch.syspath_prepend(str(SITE))
    assert task_names(["all"]) == [*PACKAGED_TASKS, "steadiness"]
    assert tasks()["path_choice"] is PACKAGED_TASKS["path_choice"]


def test_an_outside_task_runs_and_scores_on_the_leaderboard(monkeypatch):
    monkeypatch.syspath_prepend(str(SITE))
    row = asyncio.run(bench_model("offline", ["steadiness"], BenchSettings(scenario="trio")))
    assert set(row["tasks"]) == {"steadiness"} and row["tasks"]["steadiness"]["score"] == 100.0
