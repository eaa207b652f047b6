"""The benchmark's intervals: a cluster bootstrap over seeds and Paths covers a known mean about 95% of the time
on data made the way benchmark data is (Path effects, items alike within a Path, seed noise), where resampling
items within each Path does not; a Path's own interval only where n allows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from amphoreus_graph.bench.stats import MIN_PATHS, MIN_UNITS, score_results, score_runs
from amphoreus_graph.bench.tasks.base import ItemScore, TaskResult

MEAN = 0.5  # the generative model's true mean score
PATHS, ITEMS, SEEDS, TASKS = 18, 6, 3, 2


def simulated(rng: np.random.Generator) -> dict[int, list[TaskResult]]:
    """One benchmark's results under SEEDS seeds: a Path's effect (shared by its items in every task), an item's,
    a seed's shift, then a 0/1 outcome. The effects are uniform, so every chance stays in [0, 1] and the mean
    score over Paths, items and seeds is MEAN exactly."""
    path_effect = rng.uniform(-0.2, 0.2, PATHS)
    item_effect = rng.uniform(-0.1, 0.1, (TASKS, PATHS, ITEMS))
    seed_shift = rng.uniform(-0.1, 0.1, SEEDS)
    runs = {}
    for s in range(SEEDS):
        chance = MEAN + path_effect[None, :, None] + item_effect + seed_shift[s]
        won = rng.random(chance.shape) < chance
        runs[s] = [
            TaskResult(
                task=f"t{t}",
                scores=[
                    ItemScore(item=f"{p}-{i}", path=f"P{p}", score=float(won[t, p, i]))
                    for p in range(PATHS)
                    for i in range(ITEMS)
                ],
            )
            for t in range(TASKS)
        ]
    return runs


def within_stratum_ci(runs: dict[int, list[TaskResult]], rng: np.random.Generator, replicates: int) -> tuple:
    """The bootstrap this one replaced: items (every seed's score an item) resampled within each (task, Path)."""
    strata: dict[tuple[str, str], list[float]] = {}
    for results in runs.values():
        for result in results:
            for item in result.scores:
                strata.setdefault((result.task, item.path), []).append(item.score)
    tasks = sorted({t for t, _ in strata})
    boot = []
    for task in tasks:
        per_path = [np.asarray(v) for (t, _), v in strata.items() if t == task]
        boot.append(np.mean([v[rng.integers(0, len(v), (replicates, len(v)))].mean(axis=1) for v in per_path], 0))
    low, high = np.percentile(np.mean(boot, axis=0), [2.5, 97.5])
    return 100 * low, 100 * high


def test_the_interval_covers_a_known_mean_and_the_old_one_does_not():
    rng = np.random.default_rng(7)
    trials, replicates = 300, 400
    ours = old = 0
    for trial in range(trials):
        runs = simulated(rng)
        scored = score_runs(runs, seed=trial, replicates=replicates)
        assert scored.pes.ci is not None
        ours += scored.pes.ci[0] <= 100 * MEAN <= scored.pes.ci[1]
        low, high = within_stratum_ci(runs, rng, replicates)
        old += low <= 100 * MEAN <= high
    assert 0.90 <= ours / trials <= 0.99, ours / trials
    assert old / trials < 0.80, old / trials  # the same data shows the test can fail


def _result(task: str, scores: dict[str, list[float]]) -> TaskResult:
    items = [ItemScore(item=f"{p}{i}", path=p, score=s) for p, values in scores.items() for i, s in enumerate(values)]
    return TaskResult(task=task, scores=items)


def _paths(count: int, values: list[float]) -> dict[str, list[float]]:
    return {f"P{k:02d}": values for k in range(count)}


def test_a_path_has_an_interval_only_where_items_times_seeds_allow():
    few = _paths(MIN_PATHS, [1.0, 0.0, 1.0, 0.0])  # 4 items a Path
    one = score_results([_result("t", few)]).task_paths["t"]["P00"]
    assert one.ci is None and one.reason == f"n too small: 4 items × seeds < {MIN_UNITS}"
    three = score_runs({s: [_result("t", few)] for s in range(3)}).task_paths["t"]["P00"]
    assert three.ci is not None and three.n == 12


def test_all_equal_scores_get_the_exact_bound_not_a_point():
    perfect = score_results([_result("t", _paths(MIN_PATHS, [1.0] * 12))])
    path = perfect.task_paths["t"]["P00"]
    assert path.score == 100 and path.ci == (round(100 * 0.025 ** (1 / 12), 2), 100.0)  # Clopper-Pearson 12/12
    assert perfect.tasks["t"].ci == (round(100 * 0.025 ** (1 / MIN_PATHS), 2), 100.0)
    assert score_results([_result("t", _paths(MIN_PATHS, [0.0] * 12))]).tasks["t"].ci[0] == 0.0
    half = score_results([_result("t", _paths(MIN_PATHS, [0.5] * 12))]).tasks["t"]
    assert half.ci is None and "no spread" in (half.reason or "")


def test_too_few_paths_give_no_task_interval():
    scored = score_results([_result("t", _paths(3, [1.0, 0.0] * 6))])
    assert scored.tasks["t"].ci is None and scored.tasks["t"].reason == f"n too small: 3 Paths < {MIN_PATHS}"
    assert scored.pes.ci is None and scored.paths["P00"].ci is not None


def test_seeds_are_averaged_and_kept():
    rng = np.random.default_rng(0)
    runs = {10 + s: [_result("t", _paths(12, list(rng.random(5))))] for s in range(3)}
    scored = score_runs(runs)
    assert [s.seed for s in scored.seeds] == [10, 11, 12]
    assert scored.pes.score == pytest.approx(np.mean([s.pes for s in scored.seeds]), abs=0.01)
    alone = score_results(runs[10])
    assert alone.pes.score == scored.seeds[0].pes


def test_seeds_must_score_the_same_items():
    runs = {0: [_result("t", _paths(12, [1.0] * 4))], 1: [_result("t", _paths(12, [1.0] * 5))]}
    with pytest.raises(ValueError, match="same items"):
        score_runs(runs)


def test_bench_runs_every_seed_and_says_where_n_is_too_small(cli, tmp_path):
    args = ("bench", "--model", "random", "--tasks", "path_choice", "--split", "heldout", "--out", str(tmp_path))
    code, stdout, stderr = cli(*args, "--seed", "5", "--seeds", "2")
    assert code == 0, stdout + stderr
    row = json.loads((tmp_path / "leaderboard.json").read_text())["models"][0]
    assert row["seeds"] == [5, 6] and [s["seed"] for s in row["per_seed"]] == [5, 6]
    assert row["pes_score"] == pytest.approx(np.mean([s["pes"] for s in row["per_seed"]]), abs=0.01)
    assert row["ci"][0] <= row["pes_score"] <= row["ci"][1]
    path = row["tasks"]["path_choice"]["paths"]["Destruction"]  # 4 held-out items × 2 seeds
    assert path["ci"] is None and path["reason"] == f"n too small: 8 items × seeds < {MIN_UNITS}"
    assert "seeds 5-6" in (tmp_path / "leaderboard.md").read_text()
    code, _, stderr = cli(*args, "--seeds", "0")
    assert code == 2 and "--seeds" in stderr and len(stderr.strip().splitlines()) == 1
