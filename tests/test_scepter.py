"""The Scepter: many societies at once, locally and on Ray; merged, checked, resumable, killable."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amphoreus_graph.contracts.events import SocietyUpdate, parse_event
from amphoreus_graph.models.limits import endpoint_limiter, share_endpoints
from amphoreus_graph.scepter import Scepter, ScepterConfig
from amphoreus_graph.scepter.progress import read_progress
from amphoreus_graph.scepter.ray_engine import batches, run_batch, shares
from amphoreus_graph.scepter.runner import ScepterSummary
from amphoreus_graph.society.config import RunConfig
from amphoreus_graph.society.samples import iter_samples
from tests.openai_server import InFlight
from tests.scepter_thread import start_scepter

TRIO = ["Cyrene", "Phainon", "Anaxagoras"]


def _plan(out: Path, *, societies: int = 3, rounds: int = 2, engine: str = "local", **template) -> ScepterConfig:
    run = RunConfig(scenario="trio", cycles=1, rounds=rounds, seed=11, out=out, **template)
    return ScepterConfig(societies=societies, scenarios=["trio"], template=run, engine=engine)  # type: ignore[arg-type]


def _shards(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "samples").glob("cycle-*.jsonl"))}


def _ids(run: Path) -> list[str]:
    return [s.id for s in iter_samples(run / "samples")]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> tuple[Path, ScepterSummary]:
    """Three trio societies (2 rounds each) on the local engine; the reference for the other tests."""
    run = tmp_path_factory.mktemp("local") / "scepter"
    summary = asyncio.run(Scepter(_plan(run)).run())
    return run, summary


@pytest.fixture(scope="module")
def ray_cluster():
    """Ray started here in local mode with 2 CPUs (workers get HF_HUB_OFFLINE from the engine's runtime_env)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_local_engine_runs_three_complete_societies_with_their_own_seeds(local_run):
    run, summary = local_run
    names = [f"scepter-s{i:03d}" for i in range(3)]
    assert summary.societies == 3 and [s.society for s in summary.per_society] == names
    assert [s.seed for s in summary.per_society] == [11, 12, 13]
    expected = {f"{name}/c1/r{r}/{heir}" for name in names for r in (1, 2) for heir in TRIO}
    ids = _ids(run)
    assert len(ids) == len(set(ids)) == summary.samples_written == len(expected)
    assert set(ids) == expected
    for name in names:  # every society is an ordinary, finished run of its own
        society = run / "societies" / name
        assert json.loads((society / "summary.json").read_text())["samples_written"] == 6
        assert (society / "checkpoint.sqlite").is_file() and (society / "memory").is_dir()
    situations = {name: [s for s in iter_samples(run / "societies" / name / "samples")] for name in names}
    assert len({tuple(s.messages[1]["content"] for s in rows) for rows in situations.values()}) == 3
    manifest = json.loads((run / "samples" / "manifest.json").read_text())
    assert manifest["samples"] == 18 and [m["society"] for m in manifest["societies"]] == names


def test_a_finished_society_lets_go_of_its_chroma(local_run):
    """chromadb keeps a system per directory for the process's life unless its client is closed: a process that
    runs thousands of societies would grow by ~16 MB for each."""
    from chromadb.api.shared_system_client import SharedSystemClient

    run, _ = local_run
    assert not [key for key in SharedSystemClient._identifier_to_system if str(run.absolute()) in key]


async def test_samples_stream_to_disk_round_by_round(tmp_path):
    assert inspect.isgenerator(iter_samples(tmp_path))  # readers never hold a run in memory
    run = tmp_path / "streamed"
    seen_mid_run = []
    async for event in Scepter(_plan(run, societies=2, rounds=3)).stream():
        assert parse_event(event.payload()) == event  # typed, and JSON-able as it is
        if isinstance(event, SocietyUpdate) and 0 < event.position < 3:
            shard = run / "societies" / event.society / "samples" / "cycle-0001.jsonl"
            seen_mid_run.append(len(shard.read_bytes().splitlines()) == 3 * event.position)
    assert seen_mid_run and all(seen_mid_run)


@pytest.mark.slow
def test_kill_9_of_a_local_scepter_then_resume_gives_the_uninterrupted_samples(cli, tmp_path):
    reference = tmp_path / "clean" / "scepter"
    asyncio.run(Scepter(_plan(reference, rounds=4)).run())
    run = tmp_path / "killed" / "scepter"  # same name, so the same societies
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "4", "--seed", "11", "--societies", "3", "--quiet"]
    victim = subprocess.Popen(
        [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *args, "--out", str(run)],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    positions: list[int] = []
    while time.monotonic() < deadline and victim.poll() is None:
        found = [read_progress(run / "societies" / f"scepter-s{i:03d}") for i in range(3)]
        positions = [p["position"] if p else 0 for p in found]
        if any(positions) and min(positions) < 4:
            break
        time.sleep(0.02)
    assert victim.poll() is None, "the run finished before it could be killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert 0 < sum(positions) < 12 and not (run / "summary.json").exists()
    code, _, err = cli("simulate", "--resume", str(run), "--quiet")
    assert code == 0, err
    assert _shards(run) == _shards(reference)
    ids = _ids(run)
    assert len(ids) == len(set(ids)) == 36


@pytest.mark.slow  # Ray's start, worker processes and their embedder loads: ~30 s for the two Ray tests
def test_same_seeds_same_samples_on_local_and_ray(local_run, ray_cluster, tmp_path):
    reference, local_summary = local_run
    run = tmp_path / "scepter"
    summary = asyncio.run(Scepter(_plan(run, engine="ray")).run())
    assert summary.engine == "ray" and summary.samples_written == local_summary.samples_written
    assert _shards(run) == _shards(reference)
    for name in (s.society for s in summary.per_society):
        society = run / "societies" / name
        assert (society / "samples").is_dir() and (society / "checkpoint.sqlite").is_file()


@pytest.mark.slow
def test_a_killed_ray_worker_loses_and_duplicates_nothing(ray_cluster, tmp_path):
    run = tmp_path / "killed"
    plan = _plan(run, societies=2, rounds=4, engine="ray", model="scripted:latency=0.4")
    thread, outcome = start_scepter(plan)
    victim = run / "societies" / "killed-s000"
    deadline = time.monotonic() + 180
    progress = None
    while time.monotonic() < deadline and thread.is_alive():
        progress = read_progress(victim)
        if progress and 1 <= progress["position"] < 4:
            break
        time.sleep(0.02)
    assert progress and 1 <= progress["position"] < 4, f"never caught the society mid-run: {progress}"
    os.kill(progress["pid"], signal.SIGKILL)
    thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    summary = outcome["summary"]
    assert read_progress(victim)["pid"] != progress["pid"]  # a new worker finished it from its checkpoint
    expected = {f"killed-s{i:03d}/c1/r{r}/{heir}" for i in range(2) for r in range(1, 5) for heir in TRIO}
    ids = _ids(run)
    assert len(ids) == len(set(ids)) == summary.samples_written == len(expected)
    assert set(ids) == expected


def test_batches_deal_societies_round_robin():
    assert batches([f"s{i}" for i in range(5)], 2) == [["s0", "s2", "s4"], ["s1", "s3"]]
    assert batches(["s0"], 8) == [["s0"]]


def test_an_endpoints_limit_is_shared_out_among_processes():
    assert shares(3, 2) == [2, 1] and shares(32, 2) == [16, 16] and shares(2, 5) == [1] * 5
    assert all(sum(shares(limit, parts)) == limit for limit in range(1, 40) for parts in range(1, min(limit, 9) + 1))
    share_endpoints(2)
    try:
        assert endpoint_limiter("http://shared.test/v1", 8).ceiling == 2, "a caller naming more gets the share"
    finally:
        share_endpoints(None)
    assert endpoint_limiter("http://shared.test/v1", 8).ceiling == 8


def test_a_ray_workers_batch_keeps_to_its_share_of_the_endpoint(openai_server, tmp_path):
    """What a Ray worker runs (`run_batch`), here in-process: two societies that ask 6 calls at a time, kept to the
    worker's share of 2 (the driver deals the shares so that they add up to --max-concurrency)."""
    counter = InFlight(0.3)
    openai_server.replier = counter
    plan = _plan(tmp_path / "shared", societies=2, rounds=1, model="served", base_url=openai_server.url)
    try:
        summaries = run_batch(plan.model_dump_json(), [c.run_id for c in plan.society_configs()], share=2)
    finally:
        share_endpoints(None)
    assert sum(s["samples_written"] for s in summaries) == 2 * len(TRIO)
    assert counter.peak == 2, "the share in flight at once, and never more"


def test_cli_runs_and_resumes_a_scepter(cli, tmp_path):
    run = tmp_path / "many"
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "1", "--quiet"]
    code, out, err = cli("simulate", *args, "--societies", "2", "--out", str(run))
    assert code == 0, err
    assert "2 societies on local" in out and len(_ids(run)) == 6
    code, out, err = cli("simulate", "--resume", str(run), "--quiet")
    assert code == 0, err
    assert len(_ids(run)) == 6
    for more in (["--societies", "2"], []):  # neither a Scepter nor a single run writes over it
        code, _, err = cli("simulate", *args, *more, "--out", str(run))
        assert code == 2 and "already holds a run" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "spark"], "--engine 'spark': expected one of local, ray"),
        (["--societies", "0"], "--societies 0: expected at least 1"),
        (["--address", "ray://x:10001"], "--address and --ray-cpus need --engine ray"),
        (["--scenario", "trio", "--scenario", "amphoreus"], "one society runs one"),
    ],
)
def test_bad_scepter_input_is_one_line(cli, tmp_path, args, message):
    code, _, err = cli("simulate", *args, "--out", str(tmp_path / "bad"), "--quiet")
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_ray_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    code, _, err = cli("simulate", "--societies", "2", "--engine", "ray", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 2 and "pip install 'amphoreus-graph[ray]'" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
