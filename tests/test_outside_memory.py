"""A memory backend from outside the package (tests/outside_memory: SQLite), found through its own entry point as
an installed package's would be, passes amphoreus_graph.testing's suite and keeps a real `amphoreus simulate` run's
memories, chosen with `--memory`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.memory.backends import memory_backend, registered_backends
from amphoreus_graph.testing import MemoryConformance, OpenIndex
from tests.conftest import REPO

SITE = Path(__file__).parent / "outside_memory" / "site"  # what `pip install outside-memory` would leave


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The outside package's dist-info on sys.path: importlib.metadata reads its entry_points.txt from there."""
    monkeypatch.syspath_prepend(str(SITE))
    yield


def test_the_outside_backend_is_found_by_its_entry_point_only_once_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "sqlite" not in registered_backends()
    monkeypatch.syspath_prepend(str(SITE))
    assert registered_backends()["sqlite"].value == "tests.outside_memory.sqlite_index:open_sqlite"


class TestOutsideSqlite(MemoryConformance):
    @pytest.fixture
    def open_index(self, installed: None, tmp_path: Path) -> OpenIndex:
        store = memory_backend(f"sqlite://{tmp_path}/memories.sqlite", tmp_path)
        return lambda society: store.open_index(society)


def test_a_run_keeps_its_memories_in_the_outside_backend_chosen_with_memory(tmp_path: Path) -> None:
    """A real `amphoreus simulate` in its own process, the backend found by entry point; then `memory inspect`
    reads the run's memories back through it, from the run's config.json alone."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(REPO), str(SITE)]), "HF_HUB_OFFLINE": "1"}
    store = tmp_path / "elsewhere" / "memories.sqlite"

    def amphoreus(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "amphoreus_graph.cli", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    run = amphoreus(
        "simulate", "--memory", f"sqlite://{store}", "--cycles", "1", "--rounds", "2", "--quiet", "--out", "run"
    )
    assert run.returncode == 0, run.stderr
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["memory"] == f"sqlite://{store}" and not (tmp_path / "run" / "memory").exists()
    with closing(sqlite3.connect(store)) as db:
        held = dict(db.execute("SELECT society, count(*) FROM rows GROUP BY society").fetchall())
        (claim,) = db.execute("SELECT value FROM claims WHERE society = 'run'").fetchone()
    assert held["run"] > 0 and json.loads(claim)["run_dir"].endswith("run")
    agent = load_scenario("amphoreus").agent_names[0]
    shown = amphoreus("memory", "inspect", "run", "--agent", agent, "--query", "the flame", "-k", "3")
    assert shown.returncode == 0 and "remembers nothing" not in shown.stdout, shown.stderr


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("nowhere://x", "unknown scheme 'nowhere'; expected one of ['chroma', 'chroma+http', 'chroma+https', 'memory'"),
        ("chroma", "expected SCHEME://WHERE"),
        ("chroma+http://", "expected chroma+http://HOST:PORT"),
        ("chroma+http://host:port", "expected chroma+http://HOST:PORT"),
        ("memory://somewhere", "expected memory:// with nothing after it"),
        ("chroma:///tmp/x?fast=1", "without options"),
    ],
)
def test_a_memory_url_no_backend_takes_is_one_line_and_exit_2(cli, tmp_path: Path, url: str, says: str) -> None:
    code, _, err = cli("simulate", "--memory", url, "--cycles", "1", "--rounds", "1", "--out", str(tmp_path / "r"))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists(), "refused before anything was written"


def test_memory_beside_memory_dir_is_one_line(cli, tmp_path: Path) -> None:
    code, _, err = cli("simulate", "--memory", "memory://", "--memory-dir", str(tmp_path / "m"), "--out", str(tmp_path))
    assert code == 2 and "--memory 'memory://' and --memory-dir both name the store" in err
