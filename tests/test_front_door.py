"""The library's front door: `import amphoreus_graph as ag` gives every documented name, loads nothing until one is
used, and docs/library.md and the README's library quick start import from it alone and run as written."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import amphoreus_graph as ag
from tests.conftest import REPO
from tests.test_readme import BLOCKS as README_BLOCKS
from tests.test_readme import README, Block, checkout_stand_in, readme_blocks, run_block

LIBRARY = REPO / "docs" / "library.md"
LIBRARY_BLOCKS = [b for b in readme_blocks(LIBRARY.read_text(encoding="utf-8")) if b.language == "python"]
QUICK_START = [b for b in README_BLOCKS if b.section == "Quick start: the library" and b.language == "python"]
PROMISED = {"Simulation", "RunConfig", "World", "Policy", "Memory", "RecordIndex", "events", "__version__"}


def test_the_front_door_has_the_promised_names_and_each_resolves() -> None:
    assert set(ag.__all__) >= PROMISED
    assert set(ag.__all__) == {*ag._HOMES, "__version__"}, "__all__ and the table of homes say the same"
    for name in ag.__all__:
        assert getattr(ag, name) is not None, name
    assert ag.events.parse_event({"type": "repaired", "message": "m"}) == ag.events.Repaired(message="m")
    assert ag.RunConfig.__module__ == "amphoreus_graph.society.config", "the class itself, not a copy"
    with pytest.raises(AttributeError, match="no attribute 'Simulator'"):
        _ = ag.Simulator


def test_the_version_is_the_distributions() -> None:
    from importlib.metadata import version

    assert ag.__version__ == version("amphoreus-graph")


def test_importing_the_package_loads_none_of_its_parts() -> None:
    """`import amphoreus_graph` stays as cheap as it was: no submodule, no LangGraph, no pydantic."""
    probe = "import sys, amphoreus_graph; print(sorted(m for m in sys.modules if m.split('.')[0] in {0}))"
    roots = {"amphoreus_graph", "langgraph", "pydantic", "chromadb"}
    done = subprocess.run(
        [sys.executable, "-c", probe.format(sorted(roots))], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['amphoreus_graph']", done.stdout


def imports_beyond_the_front_door(block: Block) -> list[str]:
    """The import lines of a Python block that reach past `amphoreus_graph` into its modules."""
    deep = []
    for node in ast.walk(ast.parse(block.code)):
        if isinstance(node, ast.Import):
            deep += [a.name for a in node.names if a.name.startswith("amphoreus_graph.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("amphoreus_graph."):
            deep.append(str(node.module))
    return deep


@pytest.mark.parametrize(
    "block", [*LIBRARY_BLOCKS, *QUICK_START], ids=lambda b: f"{'library' if b in LIBRARY_BLOCKS else 'README'}:{b.line}"
)
def test_examples_import_only_from_the_front_door(block: Block) -> None:
    assert "amphoreus_graph" in block.code, "every example uses the library"
    assert not imports_beyond_the_front_door(block), f"import from `amphoreus_graph` itself: {block.code}"


def test_the_docs_have_examples_to_check() -> None:
    assert len(LIBRARY_BLOCKS) >= 3 and len(QUICK_START) == 1, (README, LIBRARY)


def test_library_examples_run_in_order(tmp_path: Path) -> None:
    """Each example of docs/library.md exits 0 as written, one after another in one directory (a later one reads
    the run an earlier one wrote), offline, as the README's quick starts are run (tests/test_readme.py)."""
    cwd = checkout_stand_in(tmp_path / "checkout")
    printed = [run_block(block, cwd, source="docs/library.md") for block in LIBRARY_BLOCKS]
    assert printed[0].startswith("1 1 {"), "typed events: cycle, round, actions by agent"
    assert printed[1].startswith("trio 7 18 "), "config and summary read back: 2 cycles × 3 rounds × 3 agents"
    assert printed[2].strip() == "first-option 6 0", "one's own decider decided every turn, none fell back"
