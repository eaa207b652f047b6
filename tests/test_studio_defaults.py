"""Studio's graphs as a user submits them: from a checkout with no AMPHOREUS_* settings, so runs go to the default
relative directories (`runs/`, `memory/chroma`), under `langgraph dev`'s check for blocking calls on the event loop.

The fast tests run the graphs in process under that same check (langgraph-runtime-inmem's blockbuster); the slow
one serves a fresh copy of the repository with `langgraph dev` and submits all six graphs with their defaults.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.society.config import stored_config
from amphoreus_graph.society.graph import build_society_graph
from amphoreus_graph.society.recurrence import build_recurrence_graph
from amphoreus_graph.society.services import SocietySettings

inmem_queue = pytest.importorskip("langgraph_runtime_inmem.queue", reason="langgraph-cli[inmem] is not installed")


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """No AMPHOREUS_* settings: the graphs' directories are their defaults, relative to the working directory."""
    for name in [name for name in os.environ if name.startswith("AMPHOREUS_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unset: None) -> Path:
    """A user's working directory with nothing set."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@contextmanager
def as_langgraph_dev() -> Iterator[None]:
    """The check `langgraph dev` runs its graphs under: a blocking call on the event loop (os.getcwd, a SQLite
    query, a directory made) raises BlockingError instead of stalling every other run."""
    buster = inmem_queue._enable_blockbuster()
    try:
        yield
    finally:
        buster.deactivate()


async def submit(builder: StateGraph[Any, Any, Any, Any], thread_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A thread's run as the server runs it: its own checkpointer, settings from the environment, blocking checked."""
    graph = builder.compile(checkpointer=InMemorySaver())
    with as_langgraph_dev():
        return await graph.ainvoke(payload, {"configurable": {"thread_id": thread_id}}, context=SocietySettings())


def test_a_recurrence_thread_on_relative_dirs_blocks_nothing(checkout: Path) -> None:
    """Studio's step 1 failed at once with `BlockingError: os.getcwd`: `open_run` resolved runs/ on the event loop."""
    final = asyncio.run(submit(build_recurrence_graph(), "r-thread", {"scenario": "trio", "rounds": 1, "cycles": 1}))
    assert [s["rounds"] for s in final["cycle_summaries"]] == [1]
    run = Path("runs/r-thread")
    config = stored_config(run)
    assert (config.cycles, config.name, config.memory_dir) == (1, "r-thread", (checkout / "memory/chroma").resolve())
    assert json.loads((run / "config.json").read_text())["out"] == str(run.resolve()), "readable from anywhere"
    assert sorted(p.name for p in (run / "samples").iterdir()) == ["cycle-0001.jsonl"]


def test_a_scenario_file_named_relative_to_the_server_blocks_nothing(checkout: Path) -> None:
    """The input form's `scenario` takes a YAML file: named relative to where the server runs, it was read (and
    resolved) on the event loop."""
    Path("own-world.yaml").write_text("extends: trio\nrounds_per_cycle: 1\n", encoding="utf-8")
    final = asyncio.run(submit(build_society_graph(), "own-world", {"scenario": "own-world.yaml"}))
    assert final["world"]["round"] == 1 and final["stats"]["samples_written"] == 3
    assert stored_config(Path("runs/own-world")).scenario == "own-world.yaml"


def test_a_society_thread_is_a_run_that_forks(checkout: Path, cli: Any) -> None:
    """A society thread (one cycle) writes its run's config.json, as a recurrence thread does, so a fork (and an
    interview, experts, the report) can take its folder; the fork's replay checks its past byte for byte."""
    final = asyncio.run(submit(build_society_graph(), "s-thread", {"scenario": "trio", "rounds": 2}))
    assert final["world"]["round"] == 2
    config = stored_config(Path("runs/s-thread"))
    assert (config.scenario, config.seed, config.rounds, config.cycles) == ("trio", 7, 2, 1)
    assert config.memory_dir == (checkout / "memory" / "chroma").resolve()

    code, _, err = cli("simulate", "--fork", "runs/s-thread", "--at", "1/1", "--seed", "8", "--out", "runs/branch")
    assert code == 0, err
    ours, theirs = (
        Path(run, "samples/cycle-0001.jsonl").read_text().splitlines() for run in ("runs/branch", "runs/s-thread")
    )
    assert [json.loads(row)["round"] for row in ours] == [1, 1, 1, 2, 2, 2]
    assert ours[:3] == theirs[:3], "the same first round, byte for byte"


def test_newest_run_is_a_run_not_any_folder_with_samples(checkout: Path, cli: Any) -> None:
    """A folder under runs/ with samples but no config.json (a society thread of an earlier version, samples
    copied aside) is newer than the run: Studio's fork, experts and interview defaults skip it."""
    from graphs.interview import graph as interview

    code, _, err = cli("simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "1", "--out", "runs/made")
    assert code == 0, err
    aside = Path("runs/aside/samples")
    aside.mkdir(parents=True)
    shutil.copy("runs/made/samples/cycle-0001.jsonl", aside)
    later = time.time() + 5
    os.utime(aside / "cycle-0001.jsonl", (later, later))
    answered = interview.invoke({})
    assert answered["run"] == "runs/made" and answered["agent"] == "Cyrene" and answered["memories"]


def test_with_no_run_the_defaults_say_so_in_one_line(checkout: Path) -> None:
    from amphoreus_graph.errors import AmphoreusError
    from graphs.interview import graph as interview

    Path("runs/aside/samples").mkdir(parents=True)
    Path("runs/aside/samples/cycle-0001.jsonl").write_text("{}\n")
    with pytest.raises(AmphoreusError, match=r"^runs: no run with config.json and samples yet; "):
        interview.invoke({})


def test_threads_in_two_working_directories_keep_their_own_stores(
    tmp_path: Path, monkeypatch: Any, unset: None
) -> None:
    """The same relative memory/chroma in two working directories of one process (a notebook that moves, these
    tests) is two stores: Chroma keys its embedded clients by the path as given, so the services open it absolute."""
    for place in ("one", "two"):
        (tmp_path / place).mkdir()
        monkeypatch.chdir(tmp_path / place)
        final = asyncio.run(submit(build_society_graph(), f"thread-{place}", {"scenario": "trio", "rounds": 1}))
        assert final["stats"]["samples_written"] == 3
        assert stored_config(Path(f"runs/thread-{place}")).memory_dir == (tmp_path / place / "memory/chroma").resolve()


# ---- the acceptance test: `langgraph dev` from a fresh clone, every graph from its defaults, in sequence ----

LANGGRAPH = Path(sys.executable).with_name("langgraph")
ROOT = Path(__file__).resolve().parents[1]
GRAPH_TIMEOUT_S = 240.0


def fresh_clone(into: Path) -> Path:
    """The repository as `git clone` gives it (the files git tracks, as they are in this checkout, and new ones
    it does not ignore): nothing from this checkout's runs/ or memory/ comes along."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: no clone to make")
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in this checkout is not cloned either
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


@contextmanager
def serving(command: list[str], cwd: Path, clone: Path, log: Path) -> Iterator[str]:
    """A Studio server as a user starts it (`command` on a free port, in `cwd`, no AMPHOREUS_* set), running the
    clone's code; yields its URL, and stops it."""
    from tests.test_studio import server_env, studio_server

    env = {k: v for k, v in server_env(cwd, cwd).items() if not k.startswith("AMPHOREUS_")}
    env["PYTHONPATH"] = str(clone)  # the clone's code, not the editable install's
    with studio_server([*command, "--no-reload"], cwd, env, log) as url:
        yield url
        assert "BlockingError" not in log.read_text(encoding="utf-8", errors="replace")


Submitted = dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]]


async def submit_defaults(url: str, graphs: list[str], log: Path) -> Submitted:
    """Submit each graph with nothing filled in, one after another, each on a new thread; each must succeed.
    Returns, per graph, its thread, its custom events and its last state."""
    import langgraph_sdk

    from tests.test_studio import stream_run

    client = langgraph_sdk.get_client(url=url)
    submitted: Submitted = {}
    for graph in graphs:
        thread_id = (await client.threads.create())["thread_id"]
        custom, values, errors, _ = await asyncio.wait_for(
            stream_run(client, thread_id, {}, graph=graph), GRAPH_TIMEOUT_S
        )
        said = log.read_text(encoding="utf-8", errors="replace")
        assert not errors and values, f"{graph}: {errors}\n{said[-6000:]}"
        submitted[graph] = (thread_id, custom, values[-1])
    return submitted


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed (pip install -e .[dev])")
async def test_a_fresh_clone_runs_every_graph_from_its_defaults(tmp_path: Path) -> None:
    """What a new user does: `langgraph dev` in a fresh clone, no AMPHOREUS_* set, then Submit with nothing filled
    in on each graph in turn (docs/studio.md). Each run succeeds and writes under the clone's runs/ and memory/."""
    clone = fresh_clone(tmp_path / "clone")
    assert not (clone / "runs").exists() and not (clone / "memory" / "chroma").exists()
    with serving([str(LANGGRAPH), "dev", "--host", "127.0.0.1"], clone, clone, tmp_path / "langgraph-dev.log") as url:
        graphs = ["society", "recurrence", "fork", "experts", "benchmark", "interview"]
        submitted = await submit_defaults(url, graphs, tmp_path / "langgraph-dev.log")

    runs = clone / "runs"
    society, society_events, society_state = submitted["society"]
    assert [e["agents"] for e in society_events if e["type"] == "cycle_started"] == [12], "one cycle, twelve agents"
    assert society_state["world"]["outcome"] and society_state["stats"]["samples_written"] > 0
    assert stored_config(runs / society).cycles == 1, "a society thread's folder is a run: its config.json"

    recurrence, recurrence_events, recurrence_state = submitted["recurrence"]
    assert [e["cycle"] for e in recurrence_events if e["type"] == "cycle_done"] == [1, 2]
    assert len(recurrence_state["cycle_summaries"]) == 2
    config = stored_config(runs / recurrence)
    assert json.loads((runs / recurrence / "config.json").read_text())["out"] == str((runs / recurrence).resolve())
    assert config.memory_dir == (clone / "memory" / "chroma").resolve() and any(config.memory_dir.iterdir())

    _, fork_events, fork_state = submitted["fork"]
    forked = fork_events[0]
    assert (forked["type"], forked["parent"], forked["at"]) == ("forked", f"runs/{recurrence}", "1/1"), forked
    branch = clone / forked["out_dir"]
    assert fork_events[-1]["type"] == "done" and branch.parent == runs
    assert fork_state["summary"]["samples_written"] == len(list(_rows(branch / "samples")))

    _, experts_events, experts_state = submitted["experts"]
    selected = experts_events[0]
    assert selected["run_dir"] == forked["out_dir"] and selected["turns"] == min(24, selected["of"])
    assert experts_state["report"]["judged_turns"] == selected["turns"]
    assert len(_rows(branch / "judged" / "dpo.jsonl")) == experts_state["report"]["pairs"]

    _, bench_events, bench_state = submitted["benchmark"]
    assert [r["model"] for r in bench_state["leaderboard"]["models"]] == [
        e["model"] for e in bench_events[-1]["ranking"]
    ]
    assert len(bench_state["leaderboard"]["models"]) == 3
    assert {p.name for p in (runs / "bench").iterdir()} >= {"leaderboard.json", "leaderboard.md", "leaderboard.png"}

    _, _, interview_state = submitted["interview"]
    assert interview_state["run"] == forked["out_dir"] and interview_state["decided_by"] == "offline"
    assert interview_state["agent"] == scenario_of(config.scenario).agent_names[0]
    assert interview_state["answer"] and interview_state["memories"]


def _rows(path: Path) -> list[dict[str, Any]]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    return [json.loads(line) for file in files for line in file.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed (pip install -e .[dev])")
async def test_amphoreus_studio_started_elsewhere_runs_step_one_beside_its_config(tmp_path: Path) -> None:
    """`amphoreus studio --config CLONE/langgraph.json` started from another folder serves as `langgraph dev` in
    CLONE does: step 1 of docs/studio.md (recurrence, defaults) runs, into CLONE/runs and CLONE/memory."""
    clone, elsewhere = fresh_clone(tmp_path / "clone"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    studio = [sys.executable, "-m", "amphoreus_graph.cli", "studio", "--config", str(clone / "langgraph.json")]
    with serving(studio, elsewhere, clone, tmp_path / "studio.log") as url:
        submitted = await submit_defaults(url, ["recurrence"], tmp_path / "studio.log")
    thread, events, state = submitted["recurrence"]
    assert [e["cycle"] for e in events if e["type"] == "cycle_done"] == [1, 2] and len(state["cycle_summaries"]) == 2
    run = stored_config(clone / "runs" / thread)
    assert run.memory_dir == (clone / "memory" / "chroma").resolve() and any(run.memory_dir.iterdir())
    assert sorted(p.name for p in (clone / "runs" / thread / "samples").iterdir()) == [
        "cycle-0001.jsonl",
        "cycle-0002.jsonl",
    ]
    assert list(elsewhere.iterdir()) == [], "nothing lands where the command was typed"
