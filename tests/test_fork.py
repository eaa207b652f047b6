"""Forking a run (`amphoreus simulate --fork RUN --at C/R --out NEW`): the branch shares its parent's history up to
the fork point, memory included, goes on exactly as the parent did with the same settings and its own way with
another seed, and the parent's files stay as they were."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from amphoreus_graph.contracts.events import RoundDone
from amphoreus_graph.layout import RunDir
from amphoreus_graph.society.runner import RunConfig, Simulation
from tests.conftest import digests


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fork") / "parent"
    asyncio.run(Simulation(RunConfig(scenario="trio", cycles=3, rounds=4, seed=5, out=out)).run())
    return out


def positions(shard: Path) -> list[tuple[int, int]]:
    return [(row["cycle"], row["round"]) for row in map(json.loads, shard.read_text().splitlines())]


def test_a_fork_with_the_same_settings_goes_on_as_its_parent_did(parent: Path, tmp_path: Path, cli) -> None:
    before = digests(parent)
    code, _, err = cli("simulate", "--fork", str(parent), "--at", "2/3", "--out", str(tmp_path / "same"), "--quiet")
    assert code == 0, err
    ours, theirs = RunDir(tmp_path / "same"), RunDir(parent)
    for folder in ("samples", "chronicle"):
        for shard in sorted((parent / folder).glob("cycle-*.jsonl")):
            assert (tmp_path / "same" / folder / shard.name).read_bytes() == shard.read_bytes(), (folder, shard.name)
    mine, parents = json.loads(ours.summary.read_text()), json.loads(theirs.summary.read_text())
    assert {k for k in parents if parents[k] != mine.get(k)} == {"wall_time_s"}
    assert digests(parent) == before, "the parent is untouched"
    code, out, err = cli("interview", str(ours.root), "--agent", "Cyrene", "what do you remember?", "--json")
    assert code == 0 and json.loads(out)["memories"], err  # its own store, under its parent's name


def test_a_fork_with_another_seed_shares_the_past_and_not_the_future(parent: Path, tmp_path: Path, cli) -> None:
    before = digests(parent)
    branch = tmp_path / "other"
    code, _, err = cli("simulate", "--fork", str(parent), "--at", "2/3", "--out", str(branch), "--seed", "99")
    assert code == 0, err
    cycle2 = (parent / "samples" / "cycle-0002.jsonl").read_text().splitlines()
    forked = (branch / "samples" / "cycle-0002.jsonl").read_text().splitlines()
    shared = [p <= (2, 3) for p in positions(parent / "samples" / "cycle-0002.jsonl")]
    assert len(forked) == len(cycle2) and shared.count(True) < len(shared)
    assert [a == b for a, b in zip(cycle2, forked, strict=True)] == shared, "the same up to the fork point only"
    ids = [(json.loads(a)["id"], json.loads(b)["id"]) for a, b in zip(cycle2, forked, strict=True)]
    assert [theirs == mine for theirs, mine in ids] == shared, "its own rounds have ids of their own"
    assert all("@other/" in mine for (theirs, mine), same in zip(ids, shared, strict=True) if not same)
    assert json.loads(RunDir(branch).config.read_text())["seed"] == 99
    assert digests(parent) == before
    code, _, err = cli("simulate", "--fork", str(branch), "--at", "2/1", "--out", str(tmp_path / "again"))
    assert code == 2 and "is a fork that went its own way at 2/3" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--at", "2/3", "--cycles", "5"], "--cycles cannot change on a branch"),
        (["--at", "4/1"], "never played that round (its last is 3/4)"),
        (["--at", "two"], "expected CYCLE/ROUND"),
        ([], "expected all three"),
    ],
)
def test_a_fork_that_cannot_be_faithful_is_one_line(
    parent: Path, tmp_path: Path, cli, extra: list[str], message: str
) -> None:
    code, _, err = cli("simulate", "--fork", str(parent), "--out", str(tmp_path / "no"), *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "no").exists()


def test_a_model_run_without_its_cache_cannot_be_replayed(parent: Path, tmp_path: Path, cli) -> None:
    asked = tmp_path / "asked"
    shutil.copytree(parent, asked)
    summary = RunDir(asked).summary
    summary.write_text(json.dumps(json.loads(summary.read_text()) | {"model_calls": 7}))
    code, _, err = cli("simulate", "--fork", str(asked), "--at", "1/2", "--out", str(tmp_path / "no"))
    assert code == 2 and "kept no response cache" in err, err


def test_a_fork_into_a_run_directory_is_refused_before_anything_there_changes(parent: Path, tmp_path: Path) -> None:
    from amphoreus_graph.errors import AmphoreusError
    from amphoreus_graph.society.fork import fork, plan_fork

    cached, target = tmp_path / "cached", tmp_path / "target"
    shutil.copytree(parent, cached)
    shutil.copytree(parent, target)
    RunDir(cached).cache.write_bytes(b"the parent's answers")
    RunDir(target).cache.write_bytes(b"another run's answers")
    before = digests(target)
    with pytest.raises(AmphoreusError, match="already holds a run"):
        asyncio.run(fork(plan_fork(cached, (1, 2), target)))
    assert digests(target) == before


def gauges(shard: Path) -> list[list[float]]:
    return [[g["value"] for g in row["world"]["gauges"]] for row in map(json.loads, shard.read_text().splitlines())]


def test_a_fork_with_scenario_overrides_changes_the_world_from_the_fork_point_on(
    parent: Path, tmp_path: Path, cli
) -> None:
    before = digests(parent)
    branch = tmp_path / "tide"
    faster = "{black_tide: {rise_per_round: 30}}"
    code, _, err = cli(
        "simulate", "--fork", str(parent), "--at", "2/3", "--out", str(branch), "--scenario-overrides", faster
    )
    assert code == 0, err
    ours, theirs = RunDir(branch), RunDir(parent)
    assert (ours.chronicle / "cycle-0001.jsonl").read_bytes() == (theirs.chronicle / "cycle-0001.jsonl").read_bytes()
    shared = [p <= (2, 3) for p in positions(theirs.chronicle / "cycle-0002.jsonl")]
    mine, parents = gauges(ours.chronicle / "cycle-0002.jsonl"), gauges(theirs.chronicle / "cycle-0002.jsonl")
    assert mine[: shared.count(True)] == parents[: shared.count(True)]
    assert mine[shared.count(True)][0] > parents[shared.count(True)][0], "the tide rises faster after the fork"
    assert json.loads(ours.config.read_text())["scenario"] == str(ours.scenario.resolve())
    assert digests(parent) == before


def test_a_fork_whose_variant_changes_the_agents_is_refused(parent: Path, tmp_path: Path, cli) -> None:
    from amphoreus_graph.catalogs.scenario_files import packaged_scenarios, read_mapping

    heirs = read_mapping(packaged_scenarios()["trio"])["heirs"][:2]  # a world that loads, without its third heir
    for heir in heirs:
        heir["relationships"] = {k: v for k, v in heir["relationships"].items() if k != "Anaxagoras"}
    fewer = json.dumps({"heirs": heirs})  # long inline YAML (JSON): not mistaken for a file name
    code, _, err = cli(
        "simulate", "--fork", str(parent), "--at", "2/3", "--out", str(tmp_path / "no"), "--scenario-overrides", fewer
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "expected the parent's, in its order" in err, err
    assert not (tmp_path / "no").exists()


def test_a_variant_that_cannot_read_the_fork_points_world_is_refused(tmp_path: Path) -> None:
    from amphoreus_graph.catalogs.scenario import scenario_of
    from amphoreus_graph.errors import AmphoreusError
    from amphoreus_graph.society.fork import _check_takes_up

    world = scenario_of("trio").world.genesis(1)
    _check_takes_up(scenario_of("trio"), world, tmp_path)  # its own state: taken up
    with pytest.raises(AmphoreusError, match="cannot take up the world at the fork point"):
        _check_takes_up(scenario_of("fishery"), world, tmp_path)  # another world's state


def test_events_are_json_lines_a_fork_first_saying_where_it_went(parent: Path, tmp_path: Path, cli) -> None:
    from amphoreus_graph.contracts.events import Done, Forked, parse_event

    out = tmp_path / "events"
    code, printed, err = cli("simulate", "--fork", str(parent), "--at", "3/2", "--out", str(out), "--events")
    assert code == 0, err
    events = [parse_event(json.loads(line)) for line in printed.splitlines()]
    assert events[0] == Forked(parent=str(parent), at="3/2", out_dir=str(out))
    assert isinstance(events[-1], Done) and events[-1].summary["samples_written"] == 3 * 4 * 3
    code, _, err = cli("simulate", "--scenario", "trio", "--events", "--live", "--out", str(tmp_path / "no"))
    assert code == 2 and "--live" in err


def test_a_run_on_a_chroma_server_forks_into_a_store_of_its_own(tmp_path: Path, cli, chroma_url: str) -> None:
    served, branch = tmp_path / "served", tmp_path / "branch"
    args = ["--scenario", "trio", "--cycles", "2", "--rounds", "3", "--seed", "5", "--quiet"]
    code, _, err = cli("simulate", *args, "--out", str(served), "--chroma-url", chroma_url)
    assert code == 0, err
    code, _, err = cli("simulate", "--fork", str(served), "--at", "1/2", "--out", str(branch), "--quiet")
    assert code == 0, err
    for shard in sorted(RunDir(served).samples.glob("cycle-*.jsonl")):
        assert (RunDir(branch).samples / shard.name).read_bytes() == shard.read_bytes(), shard.name
    assert json.loads(RunDir(branch).config.read_text())["chroma_url"] is None
    assert (RunDir(branch).memory / "chroma.sqlite3").is_file()


def stopped_fork(parent: Path, out: Path) -> None:
    """What `fork` leaves when it is cancelled during its replay (here after the replay's round 1/2)."""
    from amphoreus_graph.society.fork import _replay_config, plan_fork

    plan = plan_fork(parent, (2, 3), out, {"seed": 99})

    async def cancelled_replay() -> None:
        RunDir(out).root.mkdir(parents=True)
        RunDir(out).fork_plan.write_text(plan.model_dump_json())
        async for event in Simulation(_replay_config(plan)).stream():
            if isinstance(event, RoundDone) and (event.cycle, event.round) == (1, 2):
                break

    asyncio.run(cancelled_replay())
    assert RunDir(out).fork_plan.is_file() and RunDir(out).checkpoint.is_file()


def assert_forked_at_2_3_with_seed_99(parent: Path, out: Path) -> None:
    assert not RunDir(out).fork_plan.exists() and json.loads(RunDir(out).config.read_text())["seed"] == 99
    cycle2 = (parent / "samples" / "cycle-0002.jsonl").read_text().splitlines()
    forked = (out / "samples" / "cycle-0002.jsonl").read_text().splitlines()
    shared = [p <= (2, 3) for p in positions(parent / "samples" / "cycle-0002.jsonl")]
    assert [a == b for a, b in zip(cycle2, forked, strict=True)] == shared, "the same past, then its own seed"
    assert (out / "samples" / "cycle-0001.jsonl").read_bytes() == (parent / "samples" / "cycle-0001.jsonl").read_bytes()


def test_a_fork_stopped_during_its_replay_is_finished_by_resume(parent: Path, tmp_path: Path, cli) -> None:
    """Cancelled (or killed) while it replays its parent, a fork leaves its plan beside the replay; `--resume`
    replays on to the fork point, then sets the branch up as planned."""
    out = tmp_path / "stopped"
    stopped_fork(parent, out)
    code, _, err = cli("simulate", "--resume", str(out), "--quiet")
    assert code == 0, err
    assert_forked_at_2_3_with_seed_99(parent, out)


def test_the_fork_graph_finishes_a_fork_stopped_in_its_out_dir(parent: Path, tmp_path: Path) -> None:
    """Studio's fork graph, submitted again with the out_dir of a fork it was cancelled in, finishes that fork."""
    from langgraph.checkpoint.memory import InMemorySaver

    from amphoreus_graph.cli.fork_graph import build_fork_graph

    out = tmp_path / "stopped"
    stopped_fork(parent, out)
    graph = build_fork_graph().compile(checkpointer=InMemorySaver())
    state = asyncio.run(graph.ainvoke({"out_dir": str(out)}, {"configurable": {"thread_id": "again"}}))
    assert state["summary"]["samples_written"] == 3 * 4 * 3
    assert_forked_at_2_3_with_seed_99(parent, out)
