"""`amphoreus studio`: the dev server reloads when the graphs' code changes and stays quiet while runs write beside it
(`langgraph dev` logs a "changes detected" line for every file written anywhere under its working directory)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import amphoreus_graph
from amphoreus_graph.cli.studio import code_dirs
from tests.test_studio import server_env, studio_server

AMPHOREUS = Path(sys.executable).with_name("amphoreus")
GRAPH = """\
from typing import TypedDict

from langgraph.graph import StateGraph


class State(TypedDict):
    n: int


graph = StateGraph(State).add_node("step", lambda s: {"n": s["n"] + 1}).set_entry_point("step").compile()
"""


def project(root: Path) -> Path:
    """A minimal LangGraph project: one graph in app/, a langgraph.json beside it."""
    (root / "app").mkdir(parents=True)
    (root / "app" / "graph.py").write_text(GRAPH, encoding="utf-8")
    config = root / "langgraph.json"
    config.write_text(json.dumps({"dependencies": ["."], "graphs": {"g": "./app/graph.py:graph"}}), encoding="utf-8")
    return config


def test_only_the_folders_holding_code_are_watched(tmp_path: Path) -> None:
    config = project(tmp_path)
    settings = {"graphs": {"g": "./app/graph.py:graph", "h": {"path": "json:loads"}}, "store": {"path": "./app/s.py:f"}}
    package = Path(amphoreus_graph.__file__).resolve().parent
    assert code_dirs(config, settings) == sorted([package, (tmp_path / "app").resolve(), Path(json.__file__).parent])
    nested = {"graphs": {"g": f"{package / 'cli' / 'studio.py'}:studio_command"}}
    assert code_dirs(config, nested) == [package], "a folder inside a watched one is not watched twice"


def test_a_missing_config_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(AMPHOREUS), "studio", "--config", str(tmp_path / "nope.json"), "--no-browser"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "nope.json" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not Path(sys.executable).with_name("langgraph").exists(), reason="the studio extra is missing")
def test_run_output_is_not_watched_but_code_is(tmp_path: Path) -> None:
    config = project(tmp_path / "proj")
    log = tmp_path / "server.log"
    command = [str(AMPHOREUS), "studio", "--config", str(config)]
    with studio_server(command, tmp_path, server_env(tmp_path / "memory", tmp_path / "runs"), log):
        for folder in ("runs/r1/samples", "memory"):  # what a run writes, in the served project
            (config.parent / folder).mkdir(parents=True)
            for i in range(5):
                (config.parent / folder / f"cycle-{i}.jsonl").write_text("{}\n")
        time.sleep(3)  # watchfiles reports within ~0.1-2 s
        text = log.read_text(errors="replace")
        assert "change" not in text, text[-3000:]
        (config.parent / "app" / "graph.py").write_text(GRAPH + "\n# edited\n", encoding="utf-8")
        deadline = time.monotonic() + 20
        while "Reloading" not in log.read_text(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "Reloading" in log.read_text(errors="replace"), "a code change must still reload the server"
