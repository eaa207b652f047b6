"""Memory URLs: the packaged schemes open the stores the older flags opened, and are declared in pyproject's
entry-point group as memory/backends.py lists them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.backends import GROUP, PACKAGED, memory_backend
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.store import MemorySpec
from amphoreus_graph.society.config import RunConfig
from tests.conftest import REPO


def test_pyproject_declares_the_packaged_schemes_as_the_registry_knows_them() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][GROUP]
    assert declared == PACKAGED


@pytest.mark.parametrize(
    ("url", "spec"),
    [
        ("chroma:///srv/memories", MemorySpec(directory=Path("/srv/memories"))),
        ("chroma://stores/my%20memories", MemorySpec(directory=Path("stores/my memories"))),
        ("chroma://", MemorySpec(directory=Path("runs/demo/memory"))),
        ("chroma+http://127.0.0.1:8000", MemorySpec(url="http://127.0.0.1:8000")),
        ("chroma+https://[::1]", MemorySpec(url="https://[::1]")),
        ("memory://", MemorySpec()),
    ],
)
def test_a_packaged_url_names_the_store_the_older_flags_named(url: str, spec: MemorySpec) -> None:
    assert memory_backend(url, Path("runs/demo")) == spec


def test_the_older_flags_keep_their_stores_and_say_the_same_as_a_url() -> None:
    run = Path("runs/demo")
    assert RunConfig(out=run).memory_store() == memory_backend("chroma://", run)
    assert RunConfig(out=run, memory_dir=Path("/m")).memory_store() == memory_backend("chroma:///m", run)
    served = RunConfig(out=run, chroma_url="http://h:9").memory_store()
    assert served == memory_backend("chroma+http://h:9", run)
    assert isinstance(RunConfig(out=run, memory="memory://").memory_store().open_index("s"), InMemoryIndex)


def test_a_url_beside_the_older_flags_is_refused() -> None:
    with pytest.raises(AmphoreusError, match="--memory 'memory://' and --chroma-url both name the store"):
        RunConfig(memory="memory://", chroma_url="http://h:9").memory_store()


def test_a_backend_that_fails_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(place: object) -> None:
        raise RuntimeError("no disk")

    monkeypatch.setattr("amphoreus_graph.memory.backends.in_process", broken)
    with pytest.raises(AmphoreusError, match=r"the 'memory' backend .* failed \(RuntimeError: no disk\)"):
        memory_backend("memory://", Path("r"))
