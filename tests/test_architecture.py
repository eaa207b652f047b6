"""The import contracts cover what is in the tree (docs/architecture.md, "Layers"): every world folder with code is
in the worlds' contracts, every top-level module in the layers, and no two sibling packages import each other.

import-linter checks only the modules a contract names, so a world or package added without a line in
pyproject.toml would pass it unchecked; these tests fail instead."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

import grimp
import pytest

import amphoreus_graph

PACKAGE = Path(amphoreus_graph.__file__).parent
WORLDS = PACKAGE / "worlds"
# The worlds allowed to ask a model (the game master resolves a round through one); any other world that
# imports the model layer breaks the contract that names every world but these.
ASK_A_MODEL = {"gm"}
# What a world may stand on besides the rules kit: everything else at the top level is forbidden to it.
WORLD_GROUND = {"contracts", "catalogs", "models", "errors", "atomic", "layout", "locks", "worlds"}


def contracts() -> list[dict]:
    """import-linter's contracts, from pyproject.toml."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text("utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def contract(begins: str) -> dict:
    """The one contract whose name begins so."""
    (found,) = [c for c in contracts() if c["name"].startswith(begins)]
    return found


def layer_names(layers: Iterable[str]) -> list[str]:
    return [name.strip().removeprefix("amphoreus_graph.") for layer in layers for name in layer.split("|")]


def top_level() -> set[str]:
    """The package's top-level modules and packages."""
    return {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} - {"__init__"}


def world_folders() -> list[Path]:
    return sorted(p for p in WORLDS.iterdir() if p.is_dir() and not p.name.startswith("__"))


def coded_worlds() -> set[str]:
    return {p.name for p in world_folders() if any(p.rglob("*.py"))}


def test_a_world_with_code_is_a_package_import_linter_sees() -> None:
    """A resolvers.py in a folder without __init__.py would be outside every contract."""
    assert world_folders(), "no world folders found"
    missing = sorted(name for name in coded_worlds() if not (WORLDS / name / "__init__.py").exists())
    assert not missing, f"world folders with Python but no __init__.py: {missing}"


def test_every_world_is_in_the_independence_contract() -> None:
    independence = contract("Worlds are independent of one another")
    assert independence["containers"] == ["amphoreus_graph.worlds"]
    assert sorted(layer_names(independence["layers"])) == sorted(coded_worlds())
    assert not any(":" in layer for layer in independence["layers"]), "siblings joined by ':' may import each other"


def test_every_world_is_in_the_forbidden_contracts() -> None:
    ground = contract("Worlds stand on contracts")
    assert {m.removeprefix("amphoreus_graph.worlds.") for m in ground["source_modules"]} == coded_worlds()
    assert {m.removeprefix("amphoreus_graph.") for m in ground["forbidden_modules"]} == top_level() - WORLD_GROUND

    no_model = contract("Only the game master asks a model")
    assert {m.removeprefix("amphoreus_graph.worlds.") for m in no_model["source_modules"]} == (
        coded_worlds() - ASK_A_MODEL
    )
    assert no_model["forbidden_modules"] == ["amphoreus_graph.models"]


def test_every_top_level_module_is_in_a_layer() -> None:
    layers = contract("Layers")["layers"]
    assert sorted(layer_names(layers)) == sorted(top_level())
    assert not any(":" in layer for layer in layers), "siblings joined by ':' may import each other"


def test_contract_names_cite_docs_that_exist() -> None:
    for each in contracts():
        assert "(docs/architecture.md)" in each["name"], each["name"]
    assert (PACKAGE.parent / "docs" / "architecture.md").exists()


def package_cycles(graph: grimp.ImportGraph, root: str) -> list[list[str]]:
    """Groups of sibling packages (at any depth under `root`) that import one another, directly or round a loop."""
    found: list[list[str]] = []
    packages = [root, *sorted(m for m in graph.find_descendants(root) if graph.find_children(m))]
    for parent in packages:
        kids = sorted(c for c in graph.find_children(parent) if graph.find_children(c))
        edges = {
            a: {b for b in kids if b != a and graph.direct_import_exists(importer=a, imported=b, as_packages=True)}
            for a in kids
        }
        found.extend(group for group in strongly_connected(edges) if len(group) > 1)
    return found


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of a small graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while (top := stack.pop()) != node:
                group.append(top)
            groups.append(sorted([*group, node]))

    for node in edges:
        if node not in index:
            visit(node)
    return groups


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ["r", "r.a", "r.a.x", "r.b", "r.b.y", "r.c", "r.c.z"]:
        graph.add_module(module)
    graph.add_import(importer="r.a.x", imported="r.b.y")
    graph.add_import(importer="r.b.y", imported="r.c.z")
    assert package_cycles(graph, "r") == []
    graph.add_import(importer="r.c.z", imported="r.a.x")
    assert package_cycles(graph, "r") == [["r.a", "r.b", "r.c"]]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("amphoreus_graph", cache_dir=None)


def test_no_two_packages_import_each_other(graph: grimp.ImportGraph) -> None:
    assert package_cycles(graph, "amphoreus_graph") == []
