"""Write the README's Results from benchmarks/results/ (baselines.json, seed_table.json): no figure is copied by hand.

Usage: python tools/readme_results.py [--check]   (--check: exit 1 if the README is out of date, else 0)

What the tables say in words (which rows part, which stay at chance) is derived from the same intervals, so a
re-run that changes the figures changes the sentences with them.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path
from typing import Any

from generated import with_part, write_or_check

from amphoreus_graph.bench.leaderboard import cell

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
BEGIN, END = "<!-- results:begin (tools/readme_results.py writes this) -->\n", "<!-- results:end -->"
CHANCE = {"path_choice": 25.0, "path_voice": 100 / 18}
WIDTH = 115
NEAR_CHANCE = 5.0  # points: the bar for a shortcut baseline


def wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False)


def apart(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two scores' 95% intervals do not overlap."""
    return bool(a.get("ci") and b.get("ci")) and (a["ci"][0] > b["ci"][1] or b["ci"][0] > a["ci"][1])


def shortcut_verdict(boards: dict[str, Any]) -> str:
    """Which shortcut baselines sit within 5 points of chance on Path-Choice (both splits) and Path-Voice."""
    scores: dict[str, list[tuple[str, float, float]]] = {}
    for board, task, label in (
        ("path_choice_dev", "path_choice", "Path-Choice dev"),
        ("path_choice_heldout", "path_choice", "Path-Choice held-out"),
        ("all_tasks", "path_voice", "Path-Voice"),
    ):
        for row in boards[board]["rows"]:
            scores.setdefault(row["model"], []).append((label, row["tasks"][task]["score"], CHANCE[task]))
    near, said = [], []
    for model in (m for m in ("longest", "keywords", "random") if m in scores):
        off = [f"{label} {score:.1f}" for label, score, chance in scores[model] if abs(score - chance) > NEAR_CHANCE]
        if off:
            said.append(f"`{model}` is more than 5 points off chance: {', '.join(off)}")
        else:
            near.append(f"`{model}`")
    if near:
        said.insert(0, f"{', '.join(near)} {'is' if len(near) == 1 else 'are'} within 5 points of chance on both tasks")
    return "; ".join(said)


def baselines_section(report: dict[str, Any]) -> str:
    boards = report["boards"]
    seeds = report["seeds"]
    lines = [
        *wrap(
            "Written by `tools/readme_results.py` from `benchmarks/results/`. The baselines "
            f"(`benchmarks/baselines.py`, {report['date']}, seeds {seeds[0]}-{seeds[-1]}, intervals over Paths and "
            "seeds) on Path-Choice's hand-written dilemmas (chance 25), the word-blind Path-Voice (chance 5.6) and "
            f"the PES; {shortcut_verdict(boards)}:"
        ),
        "",
        "| Policy | Path-Choice dev | Path-Choice held-out | Path-Voice | PES (all tasks) |",
        "|---|---|---|---|---|",
    ]
    every = {r["model"]: r for r in boards["all_tasks"]["rows"]}
    for dev, heldout in zip(boards["path_choice_dev"]["rows"], boards["path_choice_heldout"]["rows"], strict=True):
        row = every[dev["model"]]
        lines.append(
            f"| {dev['model']} | {cell(dev['tasks']['path_choice'])} | {cell(heldout['tasks']['path_choice'])} | "
            f"{cell(row['tasks']['path_voice'])} | {cell(row['pes'])} |"
        )
    return "\n".join([*lines, ""])


def seed_table_section(report: dict[str, Any]) -> str:
    rows = report["rows"]
    tasks = list(rows[0]["tasks"])
    settings = report["settings"]
    current = all("per_seed" in r for r in rows)
    seeds = report.get("training", {}).get("seeds", [settings.get("seed")])
    where = (
        f"on this instrument, every row trained and benched under seeds {', '.join(map(str, seeds))}"
        if current
        else "as last measured, before the word-blind Path-Voice judge and the cluster intervals (one seed)"
    )
    lines = [
        *wrap(
            f"The seed's comparison {where} (`benchmarks/seed_table.py`: `{settings.get('base')}`, "
            f"{settings.get('steps')} + {settings.get('dpo_steps')} DPO steps, `{settings.get('split')}` split; "
            "configuration, power, baselines: [training.md](docs/training.md#the-seeds-comparison)):"
        ),
        "",
        "| Row | PES [95% CI] | " + " | ".join(tasks) + " |",
        "|---|---|" + "---|" * len(tasks),
    ]
    for r in rows:
        lines.append(
            f"| {r['row']} | {cell({'score': r['pes_score'], 'ci': r['ci'], 'reason': r.get('reason', '')})} | "
            + " | ".join(cell(r["tasks"][t]) for t in tasks)
            + " |"
        )
    a, b, c = ({"score": r["pes_score"], "ci": r["ci"]} for r in rows[:3])
    finding = (
        "(b) multi-agent data beats (a) single-Path data with non-overlapping intervals"
        if apart(b, a) and b["score"] > a["score"]
        else "that multi-agent interaction data beats single-Path data is **not supported**: (a) and (b) overlap"
        if not apart(b, a)
        else "(a) single-Path data beats (b)"
    )
    dpo = (
        "DPO changes nothing measurable"
        if not apart(c, b)
        else ("DPO helps" if c["score"] > b["score"] else "DPO hurts")
    )
    said = f"{'On this instrument' if current else 'There'} {finding}; {dpo} ((c) against (b))."
    if (gap := detectable_gap(a, b)) is not None:
        said += f" Power: two rows part (80%, 5% two-sided) when about {gap:.0f} PES points apart."
    if shortcuts := report.get("baselines", []):
        said += " " + beyond_shortcuts(rows[:3], shortcuts, tasks)
    return "\n".join([*lines, "", *wrap(said)]) + "\n"


def detectable_gap(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """The gap between two rows' scores a comparison finds 80% of the time at the 5% level, from their 95%
    intervals read as normal: (1.96 + 0.84) standard errors of the difference."""
    if not (a.get("ci") and b.get("ci")):
        return None
    errors = [(s["ci"][1] - s["ci"][0]) / (2 * 1.96) for s in (a, b)]
    return (1.96 + 0.84) * math.hypot(*errors)


def beyond_shortcuts(rows: list[dict[str, Any]], shortcuts: list[dict[str, Any]], tasks: list[str]) -> str:
    """Per task, which rows score above every shortcut baseline with non-overlapping intervals."""
    named = ", ".join(f"`{b['row']}`" for b in shortcuts)
    above = {
        task: [
            r["row"].split(" ", 1)[0]
            for r in rows
            if all(
                apart(r["tasks"][task], b["tasks"][task]) and r["tasks"][task]["score"] > b["tasks"][task]["score"]
                for b in shortcuts
            )
        ]
        for task in tasks
    }
    if not any(above.values()):
        return f"No row parts from every shortcut baseline ({named}) on any task."
    said = [f"on {task} {' and '.join(found) if found else 'no row'} parts" for task, found in above.items()]
    return f"Against every shortcut baseline ({named}): {'; '.join(said)}."


def results() -> str:
    parts = [baselines_section(json.loads((RESULTS / "baselines.json").read_text(encoding="utf-8")))]
    seed_table = RESULTS / "seed_table.json"
    if seed_table.exists():
        parts.append(seed_table_section(json.loads(seed_table.read_text(encoding="utf-8"))))
    return "\n".join(parts)


def with_results(text: str) -> str:
    """The README with the generated Results between its markers."""
    return with_part(text, BEGIN, END, results())


def main(argv: list[str]) -> int:
    return write_or_check(README, with_results, argv, "the Results are", "tools/readme_results.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
