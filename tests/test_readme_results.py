"""The README's Results are generated from benchmarks/results/, sentences included: no figure copied by hand."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import readme_results

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_results_are_what_the_results_files_say():
    done = subprocess.run(
        [sys.executable, "tools/readme_results.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_figure_in_the_results_section_is_outside_the_generated_part():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Status and results\n", 1)[1].split("\n## ", 1)[0]
    head, rest = section.split(readme_results.BEGIN, 1)
    tail = rest.split(readme_results.END, 1)[1]
    assert not re.search(r"\d", head + tail), "a figure written by hand"


def _row(name: str, score: float, ci: list[float]) -> dict:
    entry = {"score": score, "ci": ci}
    return {"row": name, "pes_score": score, "ci": ci, "per_seed": [], "tasks": {"path_choice": entry}}


def test_the_sentences_follow_the_intervals():
    def said(a: float, b: float, c: float) -> str:
        report = {
            "rows": [_row("(a)", a, [a - 4, a + 4]), _row("(b)", b, [b - 4, b + 4]), _row("(c)", c, [c - 4, c + 4])],
            "settings": {"base": "tiny", "steps": 1, "dpo_steps": 1, "split": "heldout"},
            "training": {"seeds": [7, 8, 9]},
        }
        return " ".join(readme_results.seed_table_section(report).split())

    assert "is **not supported**: (a) and (b) overlap" in said(20, 25, 25)
    assert "(b) multi-agent data beats (a) single-Path data" in said(20, 40, 40)
    assert "DPO changes nothing measurable" in said(20, 40, 42) and "DPO hurts" in said(20, 40, 20)
    assert "seeds 7, 8, 9" in said(20, 25, 25)
    assert "when about 8 PES points apart" in said(20, 25, 25), "±4 each: 2.8 × √2 × 4/1.96"


def test_a_row_parts_from_the_shortcuts_only_above_every_one_of_them():
    rows = [_row("(a) x", 20, [16, 24]), _row("(b) y", 40, [36, 44]), _row("(c) z", 30, [26, 34])]
    shortcuts = [_row("random", 25, [21, 29]), _row("keywords", 27, [23, 31])]
    said = readme_results.beyond_shortcuts(rows, shortcuts, ["path_choice"])
    assert said == "Against every shortcut baseline (`random`, `keywords`): on path_choice (b) parts."
    shortcuts.append(_row("longest", 41, [37, 45]))
    said = readme_results.beyond_shortcuts(rows, shortcuts, ["path_choice"])
    assert said == "No row parts from every shortcut baseline (`random`, `keywords`, `longest`) on any task."
