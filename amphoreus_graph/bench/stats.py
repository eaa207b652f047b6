"""Scores 0-100 with 95% bootstrap confidence intervals: per Path and task, per task, per Path, and the
Path Emanator Score (PES). Every level is a macro-average (each Path weighs the same within a task, each task
the same within the PES); the bootstrap resamples items within each (task, Path) stratum.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from amphoreus_graph.bench.tasks.base import TaskResult

BOOTSTRAP = 2000


class Score(BaseModel):
    score: float
    ci: tuple[float, float]
    n: int


def _score(point: float, replicates: NDArray[np.float64], n: int) -> Score:
    low, high = np.percentile(replicates, [2.5, 97.5])
    return Score(score=round(100 * point, 2), ci=(round(100 * float(low), 2), round(100 * float(high), 2)), n=n)


class Scored(BaseModel):
    pes: Score
    tasks: dict[str, Score]
    task_paths: dict[str, dict[str, Score]]
    paths: dict[str, Score]


def score_results(results: list[TaskResult], *, seed: int = 0, replicates: int = BOOTSTRAP) -> Scored:
    rng = np.random.default_rng(seed)
    strata: dict[tuple[str, str], NDArray[np.float64]] = {}
    grouped: dict[tuple[str, str], list[float]] = defaultdict(list)
    for result in results:
        for item in result.scores:
            grouped[(result.task, item.path)].append(item.score)
    boot: dict[tuple[str, str], NDArray[np.float64]] = {}
    for key, values in grouped.items():
        strata[key] = np.asarray(values)
        draws = rng.integers(0, len(values), size=(replicates, len(values)))
        boot[key] = strata[key][draws].mean(axis=1)

    def macro(keys: list[tuple[str, str]]) -> tuple[float, NDArray[np.float64], int]:
        point = float(np.mean([strata[k].mean() for k in keys]))
        return point, np.mean([boot[k] for k in keys], axis=0), sum(len(strata[k]) for k in keys)

    tasks = sorted({t for t, _ in strata})
    paths = sorted({p for _, p in strata})
    task_paths = {t: {p: _score(*macro([(t, p)])) for p in paths if (t, p) in strata} for t in tasks}
    task_scores = {t: macro([k for k in strata if k[0] == t]) for t in tasks}
    pes_point = float(np.mean([task_scores[t][0] for t in tasks]))
    pes_boot = np.mean([task_scores[t][1] for t in tasks], axis=0)
    by_path = {}
    for path in paths:
        keys = [k for k in strata if k[1] == path]
        by_path[path] = _score(*macro(keys))
    return Scored(
        pes=_score(pes_point, pes_boot, sum(len(v) for v in strata.values())),
        tasks={t: _score(*task_scores[t]) for t in tasks},
        task_paths=task_paths,
        paths=by_path,
    )
