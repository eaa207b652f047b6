"""A run directory's files are named in `amphoreus_graph/layout.py` alone: a module that spells one out itself would
drift from the others the day a name changes (config.json was once read three ways)."""

from __future__ import annotations

import ast
from pathlib import Path

from amphoreus_graph.layout import SHARD_GLOB, JudgedDir, RunDir, shard_name
from tests.conftest import REPO

PACKAGE = REPO / "amphoreus_graph"
FILE_NAMES = {
    "config.json",
    "summary.json",
    RunDir.CHECKPOINT,
    RunDir.CACHE,
    "report.html",
    "progress.json",
    "scepter.json",
    "manifest.json",
    JudgedDir.JUDGEMENTS,
    JudgedDir.PAIRS,
    SHARD_GLOB,
}
FOLDER_NAMES = {RunDir.SAMPLES, RunDir.CHRONICLE, "memory", "judged", "societies"}
# Hugging Face's model config (not a run's file) has its own constant in train/checkpoint.py
ALLOWED = {("train/checkpoint.py", "config.json")}


def spelled_out(path: Path) -> list[str]:
    """Run-file names used as string constants, and run folders joined onto a path with `/`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in FILE_NAMES]
    for node in ast.walk(tree):
        joined = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
        if joined and node.right.value in FOLDER_NAMES:  # type: ignore[attr-defined]
            found.append(f'/ "{node.right.value}"')  # type: ignore[attr-defined]
    return found


def test_only_the_layout_module_names_a_run_file() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == "layout.py":
            continue
        names = [n for n in spelled_out(path) if (where, n) not in ALLOWED]
        if names:
            offenders[where] = names
    assert not offenders, offenders


def test_the_check_sees_a_name_spelled_out(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('from pathlib import Path\nA = Path("r") / "summary.json"\nB = Path("r") / "samples"\n')
    assert spelled_out(module) == ["summary.json", '/ "samples"']


def test_a_scepter_society_is_a_run_directory_of_its_own(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    society = run.society("s1")
    assert society.root == run.societies / "s1" and society.samples.parent == society.root
    assert run.manifest.parent == run.samples and run.judged.pairs.parent == run.judged.root
    names = [p.name for p in run.checkpoint_files()]
    assert names == ["checkpoint.sqlite", "checkpoint.sqlite-wal", "checkpoint.sqlite-shm"]
    assert Path(shard_name(3)).match(SHARD_GLOB) and shard_name(3) == "cycle-0003.jsonl"
