"""Scores 0-100 with 95% bootstrap intervals: per Path and task, per task, per Path (over tasks), and the Path
Emanator Score (PES), from a benchmark run under one or more seeds.

Every level is a macro-average (each Path weighs the same within a task, each task the same within the PES) and
its point is the mean over seeds. Items written for one Path resemble each other more than items of two Paths, so
the Paths, not the items, are the independent units of a task's score. Each bootstrap replicate draws, once for
every level:

- the seeds with replacement (a seed's results, every task and Path of it, move together);
- for a task's score: the task's Paths with replacement, each Path's items (under every seed) kept together;
- for the PES: the Paths with replacement, a Path's items in every task moving together;
- for one Path's score (in a task, or over the tasks): that Path's items with replacement, an item's scores under
  every seed together: the Path is fixed, its items are the units.

Drawing k units with replacement is done as weights spread by sqrt(k / (k - 1)) about 1/k, so a mean's bootstrap
variance is the unbiased s²/k (a plain bootstrap's is (k - 1)/k of it: a third too small with three seeds).

An interval needs enough units: `MIN_UNITS` items × seeds for one Path's score, `MIN_PATHS` Paths for a task's or
the PES; below that there is none, and the Score says why. Where every unit scored the same the bootstrap has no
spread to resample: at 0 or 100 the interval is then the exact one for k independent units in [0, 1] that all
hit the bound (for X in [0, 1], P(X = 1) <= E[X], so k ones have chance <= mean**k: the mean is >= 0.025**(1/k),
Clopper-Pearson's bound for k of k); elsewhere there is none.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from amphoreus_graph.bench.tasks.base import TaskResult

BOOTSTRAP = 2000
MIN_UNITS = 10  # items × seeds behind one Path's score
MIN_PATHS = 10  # Paths behind a task's score or the PES: with 5 Paths the interval covered 85% of simulated means
TAIL = 0.025  # each side of a 95% interval

Cell = tuple[str, str]  # (task, Path)
Floats = NDArray[np.float64]


class Score(BaseModel):
    score: float
    ci: tuple[float, float] | None = Field(description="the 95% interval; None where n does not allow one")
    n: int = Field(description="the item scores behind it: items × seeds")
    reason: str | None = Field(default=None, description="why there is no interval")


class SeedScore(BaseModel):
    """One seed's points alone (no interval)."""

    seed: int
    pes: float
    tasks: dict[str, float]


class Scored(BaseModel):
    pes: Score
    tasks: dict[str, Score]
    task_paths: dict[str, dict[str, Score]]
    paths: dict[str, Score]
    seeds: list[SeedScore]


def _cells(runs: Mapping[int, list[TaskResult]]) -> dict[Cell, Floats]:
    """Every (task, Path)'s item scores as a seeds × items array (an item's place is the same under every seed)."""
    per_seed = []
    for results in runs.values():
        grouped: dict[Cell, list[float]] = defaultdict(list)
        for result in results:
            for item in result.scores:
                grouped[(result.task, item.path)].append(item.score)
        per_seed.append(grouped)
    shape = {k: len(v) for k, v in per_seed[0].items()}
    if any({k: len(v) for k, v in grouped.items()} != shape for grouped in per_seed):
        raise ValueError("every seed must score the same items of the same tasks")
    return {k: np.asarray([grouped[k] for grouped in per_seed], dtype=np.float64) for k in sorted(shape)}


def _draws(rng: np.random.Generator, replicates: int, size: int) -> Floats:
    """Resampling `size` units with replacement, as weights that sum to 1, spread about 1/size by
    sqrt(size / (size - 1)): a plain bootstrap's variance of a mean is (size - 1) / size of s²/size, a third too
    small with three seeds."""
    counts = rng.multinomial(size, np.full(size, 1 / size), size=replicates) / size
    if size == 1:
        return counts
    return np.asarray(1 / size + np.sqrt(size / (size - 1)) * (counts - 1 / size), dtype=np.float64)


def _score(point: float, replicates: Floats, n: int, units: int, need: int, what: str, independent: int) -> Score:
    """The point with its interval, where `units` (of `what`) reach `need`; `independent` units for the exact
    bound when the bootstrap has no spread."""
    score = round(100 * point, 2)
    if units < need:
        return Score(score=score, ci=None, n=n, reason=f"n too small: {units} {what} < {need}")
    kept = replicates[np.isfinite(replicates)]
    if np.ptp(kept) > 1e-12:
        low, high = np.clip(np.percentile(replicates, [100 * TAIL, 100 * (1 - TAIL)]), 0, 1)
        return Score(score=score, ci=(round(100 * float(low), 2), round(100 * float(high), 2)), n=n)
    bound = round(100 * TAIL ** (1 / independent), 2)
    if point >= 1:
        return Score(score=score, ci=(bound, 100.0), n=n)
    if point <= 0:
        return Score(score=score, ci=(0.0, round(100 - bound, 2)), n=n)
    return Score(score=score, ci=None, n=n, reason=f"every one of {independent} units scored {score}: no spread")


def score_results(results: list[TaskResult], *, seed: int = 0, replicates: int = BOOTSTRAP) -> Scored:
    """One run's results (one seed) scored; `seed` seeds the bootstrap."""
    return score_runs({seed: results}, seed=seed, replicates=replicates)


def score_runs(runs: Mapping[int, list[TaskResult]], *, seed: int = 0, replicates: int = BOOTSTRAP) -> Scored:
    """The results of the same tasks under several seeds (seed → results) scored; `seed` seeds the bootstrap."""
    rng = np.random.default_rng(seed)
    cells = _cells(runs)
    n_seeds = len(runs)
    by_seed = _draws(rng, replicates, n_seeds)  # (R, seeds)
    tasks = sorted({t for t, _ in cells})
    paths = sorted({p for _, p in cells})
    of_task = {t: [p for p in paths if (t, p) in cells] for t in tasks}
    # each cell's mean under the replicate's seeds (its Path drawn whole), and with its items resampled too
    whole = {k: by_seed @ v.mean(axis=1) for k, v in cells.items()}
    items = {k: np.einsum("rs,sn,rn->r", by_seed, v, _draws(rng, replicates, v.shape[1])) for k, v in cells.items()}
    point = {k: float(v.mean()) for k, v in cells.items()}
    size = {k: v.size for k, v in cells.items()}

    def one_path(keys: list[Cell]) -> Score:
        n_items = sum(cells[k].shape[1] for k in keys)
        mean = float(np.mean([point[k] for k in keys]))
        boot = np.mean([items[k] for k in keys], axis=0)
        return _score(mean, boot, n_items * n_seeds, n_items * n_seeds, MIN_UNITS, "items × seeds", n_items)

    def task_boot(task: str, weights: Floats) -> Floats:
        """The task's macro-average in each replicate, its Paths weighed by `weights` (R, its Paths)."""
        return np.asarray((weights * np.stack([whole[(task, p)] for p in of_task[task]], axis=1)).sum(axis=1))

    draws: dict[tuple[str, ...], Floats] = {}

    def path_weights(among: list[str]) -> Floats:
        """One draw per set of Paths: tasks with the same Paths (and the PES, where a task has them all) share it."""
        if tuple(among) not in draws:
            draws[tuple(among)] = _draws(rng, replicates, len(among))
        return draws[tuple(among)]

    task_points = {t: float(np.mean([point[(t, p)] for p in of_task[t]])) for t in tasks}
    task_scores = {}
    for task in tasks:
        boot = task_boot(task, path_weights(of_task[task]))
        n, k = sum(size[(task, p)] for p in of_task[task]), len(of_task[task])
        task_scores[task] = _score(task_points[task], boot, n, k, MIN_PATHS, "Paths", k)
    # The PES is a sum over Paths of each Path's share (its tasks' scores, each over the task's Path count and
    # the task count), so one draw of Paths moves a Path's items in every task together.
    share = np.stack(
        [sum(whole[(t, p)] / (len(tasks) * len(of_task[t])) for t in tasks if (t, p) in cells) for p in paths], axis=1
    )
    pes_boot = np.asarray(len(paths) * (path_weights(paths) * share).sum(axis=1))
    pes_point = float(np.mean(list(task_points.values())))
    n_all = sum(size.values())
    pes = _score(pes_point, pes_boot, n_all, len(paths), MIN_PATHS, "Paths", len(paths))

    def seed_points(s: int) -> dict[str, float]:
        return {t: float(np.mean([cells[(t, p)][s].mean() for p in of_task[t]])) for t in tasks}

    per_seed = []
    for index, run_seed in enumerate(runs):
        points = seed_points(index)
        per_seed.append(
            SeedScore(
                seed=run_seed,
                pes=round(100 * float(np.mean(list(points.values()))), 2),
                tasks={t: round(100 * v, 2) for t, v in points.items()},
            )
        )
    return Scored(
        pes=pes,
        tasks=task_scores,
        task_paths={t: {p: one_path([(t, p)]) for p in of_task[t]} for t in tasks},
        paths={p: one_path([k for k in cells if k[1] == p]) for p in paths},
        seeds=per_seed,
    )
