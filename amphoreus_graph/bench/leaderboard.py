"""Run the benchmark for several models and write leaderboard.json, leaderboard.md and leaderboard.png."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

from amphoreus_graph.bench.choice_balance import balance_warnings
from amphoreus_graph.bench.items import read_user_items
from amphoreus_graph.bench.stats import Score, score_runs
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO, Stage, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, Task, TaskResult
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.events import TaskDone, TaskStarted
from amphoreus_graph.contracts.turn import Decision, Policy, PolicyResult, TurnContext
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.policy.registry import resolve_model


def _lazy(module: str, cls: str) -> Callable[[], Task]:
    """A task's factory that imports its module only when the task is made: Remembrance needs Chroma and the
    society's services (LangGraph), a judged task the embedder; a bench of other tasks needs none of them."""

    def make() -> Task:
        task: Task = getattr(import_module(f"amphoreus_graph.bench.tasks.{module}"), cls)()
        return task

    return make


PACKAGED_TASKS: dict[str, Callable[[], Task]] = {
    "path_choice": _lazy("path_choice", "PathChoiceTask"),
    "path_voice": _lazy("path_voice", "PathVoiceTask"),
    "erudition": _lazy("erudition", "EruditionTask"),
    "destruction": _lazy("destruction", "DestructionTask"),
    "remembrance": _lazy("remembrance", "RemembranceTask"),
}
TASK_GROUP = "amphoreus_graph.bench_tasks"


def tasks() -> dict[str, Callable[[], Task]]:
    """The packaged tasks, then those other packages register (`amphoreus_graph.bench_tasks` entry points: a
    name → a class or factory making a `Task`), each loaded only when it runs; a packaged name is never
    replaced."""
    found = dict(PACKAGED_TASKS)
    for point in metadata.entry_points(group=TASK_GROUP):
        found.setdefault(point.name, _loaded(point))
    return found


def _loaded(point: metadata.EntryPoint) -> Callable[[], Task]:
    def make() -> Task:
        task: Task = point.load()()
        return task

    return make


def task_names(spec: list[str]) -> list[str]:
    """`all` or task names; unknown ones are one error line."""
    known = tasks()
    if not spec or spec == ["all"]:
        return list(known)
    unknown = [t for t in spec if t not in known]
    if unknown:
        raise AmphoreusError(f"--tasks: unknown {unknown}; expected 'all' or some of {list(known)}")
    return spec


def benchable(scenario: str) -> Stage:
    """The scenario's stage, if the benchmark can pose its items there: its world loads (else one error line),
    and its agents walk the packaged Paths (patrons aside), the only ones the benchmark's items are written for."""
    found = stage(scenario)
    if not found.catalog.same_paths(load_paths()):
        raise AmphoreusError(
            f"--scenario {scenario}: its Paths come from {found.catalog.source}; "
            "the benchmark's items and judges know only the packaged Paths (a catalog may change their patrons only)"
        )
    return found


def check_items(task: str, path: Path) -> list[str]:
    """A user's item file for `task` reads and validates (else one error line), before any model is run; returns
    a warning line for each split a shortcut reader solves (Path-Choice: see choice_balance)."""
    return balance_warnings(read_user_items(path, tasks()[task]().item_model), f"--items {path}")


def _entry(score: Score) -> dict[str, Any]:
    """A score as leaderboard.json keeps it: `ci` null (with a `reason`) where n allows no interval."""
    entry = {"score": score.score, "ci": list(score.ci) if score.ci else None, "n": score.n}
    return entry | ({"reason": score.reason} if score.reason else {})


class CountingPolicy:
    """Counts a policy's decisions and how many fell back. A fallback is scored as a silent first option, not
    as the offline policy's decision: the benchmark measures the model, and a model whose replies never parse
    must not be scored as the offline policy under its own name."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.name = policy.name
        self.decisions = 0
        self.fallbacks = 0

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        result = await self.policy.adecide(turn)
        self.decisions += 1
        if "fallback" in result.flags:
            self.fallbacks += 1
            return result.model_copy(update={"decision": Decision(action=turn.offered[0])})
        return result


Progress = Callable[[dict[str, Any]], None]


async def bench_model(
    model: str | Policy | Mapping[int, Policy],
    names: list[str],
    settings: BenchSettings,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One leaderboard row: the model's PES, every task's and Path's score with its interval, and how many of
    its decisions fell back. Every task runs under `settings.seeds` seeds (`seed`, `seed`+1, …): points are the
    mean over seeds, intervals resample seeds and Paths (stats.py), and the row keeps every seed's points; a
    task's detail (confusion matrix, skipped items) is the first seed's. `model` is a `--model` string or a
    policy the caller keeps (to read its stats). `progress` hears `task_started` and `task_done` (with the
    task's score) events. A task whose items the scenario's world can pose none of is one error line (leave it
    out with --tasks). `model` may also be one policy per seed (seed → policy: a model trained under each seed,
    say): each seed's items are posed to its own policy, so the interval counts the training seeds' spread."""
    benchable(settings.scenario)
    if isinstance(model, Mapping):
        per_seed = {seed: CountingPolicy(p) for seed, p in model.items()}
    else:
        one = CountingPolicy(resolve_model(model, base_url=settings.base_url) if isinstance(model, str) else model)
        per_seed = {settings.seed + k: one for k in range(settings.seeds)}
    seeds = list(per_seed)
    policy = per_seed[seeds[0]]
    counted = list({id(p): p for p in per_seed.values()}.values())
    runs: dict[int, list[TaskResult]] = {s: [] for s in seeds}
    known = tasks()
    for index, name in enumerate(names, 1):
        if progress:
            progress(TaskStarted(model=policy.name, task=name, index=index, of=len(names)).payload())
        for seed in seeds:
            result = await known[name]().run(per_seed[seed], settings.model_copy(update={"seed": seed}))
            if not result.scores:
                reasons = sorted({s.reason for s in result.skipped}) or ["no items in this split"]
                raise AmphoreusError(
                    f"--tasks {name}: {settings.scenario} cannot pose any of its items ({'; '.join(reasons)}); "
                    "leave it out with --tasks"
                )
            runs[seed].append(result)
        if progress:
            alone = {s: [r[-1]] for s, r in runs.items()}
            score = score_runs(alone, seed=settings.seed).tasks[name].score  # the leaderboard's own figure
            items = len(runs[seeds[0]][-1].scores)
            progress(TaskDone(model=policy.name, task=name, score=score, items=items).payload())
    scored = score_runs(runs, seed=settings.seed)
    return {
        "model": policy.name,
        "pes_score": scored.pes.score,
        "ci": list(scored.pes.ci) if scored.pes.ci else None,
        **({"reason": scored.pes.reason} if scored.pes.reason else {}),
        "seeds": seeds,
        "per_seed": [s.model_dump() for s in scored.seeds],
        "decisions": sum(p.decisions for p in counted),
        "fallback_rate": round(sum(p.fallbacks for p in counted) / max(1, sum(p.decisions for p in counted)), 4),
        "tasks": {
            r.task: {
                **_entry(scored.tasks[r.task]),
                "paths": {p: _entry(s) for p, s in scored.task_paths[r.task].items()},
                **r.extra,
                "skipped": [s.model_dump() for s in r.skipped],
            }
            for r in runs[seeds[0]]
        },
        "paths": {p: _entry(s) for p, s in scored.paths.items()},
    }


async def run_leaderboard(
    models: list[str],
    tasks: list[str],
    settings: BenchSettings,
    out: Path,
    on_model: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    rows = []
    for model in models:
        rows.append(await bench_model(model, tasks, settings))
        if on_model:
            on_model(model)
    return write_leaderboard(rows, tasks, settings, out)


def write_leaderboard(
    rows: list[dict[str, Any]], tasks: list[str], settings: BenchSettings, out: Path
) -> dict[str, Any]:
    """Rank the rows by PES and write leaderboard.json, leaderboard.md and leaderboard.png under `out`."""
    ranked = sorted(rows, key=lambda r: -r["pes_score"])
    board = {"models": ranked, "tasks": tasks, "settings": settings.model_dump(mode="json")}
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.json").write_text(json.dumps(board, indent=2), encoding="utf-8")
    (out / "leaderboard.md").write_text(markdown(board), encoding="utf-8")
    plot(board, out / "leaderboard.png")
    return board


def cell(entry: dict[str, Any], digits: int = 1) -> str:
    """A score with its interval, or with why it has none (`ci` null: "n too small")."""
    if entry.get("ci") is None:
        return f"{entry['score']:.{digits}f} ({entry.get('reason') or 'no interval'})"
    low, high = entry["ci"]
    return f"{entry['score']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _seeds(settings: dict[str, Any]) -> str:
    count = settings.get("seeds", 1)
    return f"seed {settings['seed']}" if count == 1 else f"seeds {settings['seed']}-{settings['seed'] + count - 1}"


def markdown(board: dict[str, Any]) -> str:
    tasks = board["tasks"]
    lines = [
        "# Path Emanator leaderboard",
        "",
        f"Scenario: {board['settings'].get('scenario', DEFAULT_SCENARIO)}. "
        f"Split: {board['settings']['split']}, {_seeds(board['settings'])}, "
        f"judge {board['settings']['judge']}. Scores 0-100 (mean over seeds) with 95% intervals from a bootstrap "
        "over seeds and Paths (a Path's items kept together); a Path's own interval resamples its items.",
        "",
        "| Model | PES | " + " | ".join(tasks) + " | fallbacks |",
        "|---|---|" + "---|" * len(tasks) + "---|",
    ]
    for row in board["models"]:
        pes = cell({"score": row["pes_score"], "ci": row["ci"], "reason": row.get("reason")})
        cells = " | ".join(cell(row["tasks"][t]) for t in tasks)
        lines.append(f"| {row['model']} | {pes} | {cells} | {row['fallback_rate']:.0%} |")
    paths = sorted({p for row in board["models"] for p in row["paths"]})
    lines += [
        "",
        "## Per Path (mean over tasks)",
        "",
        "| Path | " + " | ".join(r["model"] for r in board["models"]) + " |",
    ]
    lines.append("|---|" + "---|" * len(board["models"]))
    for path in paths:
        lines.append(f"| {path} | " + " | ".join(cell(r["paths"][path], 0) for r in board["models"]) + " |")
    return "\n".join(lines) + "\n"


def plot(board: dict[str, Any], target: Path) -> None:
    """PES per model with its interval, and each task's score beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = board["models"]
    series = [("PES", [(r["pes_score"], r["ci"]) for r in rows])]
    series += [(t, [(r["tasks"][t]["score"], r["tasks"][t]["ci"]) for r in rows]) for t in board["tasks"]]
    width = 0.8 / len(series)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(rows) * len(series) / 2), 4.0))
    for n, (label, values) in enumerate(series):
        xs = [i + n * width for i in range(len(rows))]
        heights = [v for v, _ in values]
        errors = [[v - ci[0] if ci else 0.0 for v, ci in values], [ci[1] - v if ci else 0.0 for v, ci in values]]
        axes.bar(xs, heights, width, yerr=errors, capsize=3, label=label)
    axes.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(rows))], [r["model"] for r in rows])
    axes.set_ylim(0, 100)
    axes.set_ylabel("score (0-100, 95% CI)")
    axes.set_title("Path Emanator benchmarks")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
