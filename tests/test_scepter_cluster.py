"""The Scepter on a Ray cluster of several nodes (Ray's own multi-node test cluster: a head and worker nodes, each a
raylet with its own CPUs), and joining a cluster at an address that does not answer."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.scepter import Scepter, ScepterConfig
from amphoreus_graph.scepter.progress import read_progress
from amphoreus_graph.scepter.ray_connect import endpoint, join, probe
from amphoreus_graph.society.config import RunConfig
from tests.scepter_thread import start_scepter

ROUNDS = 4


def _plan(out: Path, engine: str = "local", address: str | None = None) -> ScepterConfig:
    run = RunConfig(scenario="trio", cycles=1, rounds=ROUNDS, seed=5, out=out, model="scripted:latency=0.3")
    return ScepterConfig(societies=2, scenarios=["trio"], template=run, engine=engine, address=address)  # type: ignore[arg-type]


def _shards(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "samples").glob("cycle-*.jsonl"))}


@pytest.fixture
def cluster():
    """A head with no CPUs (it only schedules) and two worker nodes of one CPU each, so two batches land apart."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'amphoreus-graph[ray]')")
    from ray.cluster_utils import Cluster

    try:
        made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
        nodes = [made.add_node(num_cpus=1) for _ in range(2)]
        made.wait_for_nodes()
    except Exception as exc:
        pytest.skip(f"Ray cannot start a multi-node test cluster here ({type(exc).__name__}: {exc})")
    yield made, nodes
    if ray.is_initialized():
        ray.shutdown()
    made.shutdown()


def _catch_mid_run(run: Path, names: list[str], alive: threading.Thread) -> dict[str, dict]:
    """Both societies' progress once both run (on a node) and one has rounds left to play."""
    deadline = time.monotonic() + 120
    found: dict[str, dict] = {}
    while time.monotonic() < deadline and alive.is_alive():
        found = {name: read_progress(run / "societies" / name) or {} for name in names}
        started = all(p.get("node") for p in found.values())
        if started and any(1 <= p["position"] < ROUNDS for p in found.values()):
            return found
        time.sleep(0.02)
    raise AssertionError(f"never caught both societies mid-run: {found}")


@pytest.mark.slow  # a head and two worker nodes, each loading the embedder: 55-100 s at load 8-14 on 2 cores
def test_a_killed_node_s_societies_finish_elsewhere_with_the_one_node_samples(cluster, tmp_path):
    made, nodes = cluster
    reference = tmp_path / "one" / "cluster"  # the same run name, so the same societies
    asyncio.run(Scepter(_plan(reference)).run())

    run = tmp_path / "many" / "cluster"
    plan = _plan(run, engine="ray", address=made.address)
    thread, outcome = start_scepter(plan)
    names = plan.names()
    before = _catch_mid_run(run, names, thread)
    assert before[names[0]]["node"] != before[names[1]]["node"], before  # spread across the two worker nodes
    victim = next(name for name, p in before.items() if p["position"] < ROUNDS)
    dead = before[victim]["node"]
    # A machine that dies takes its processes with it: its worker at once, then its raylet (the node). Ray's
    # test cluster alone leaves the worker to notice its raylet is gone, holding the society's store lock meanwhile.
    with contextlib.suppress(ProcessLookupError):
        os.kill(before[victim]["pid"], signal.SIGKILL)
    made.remove_node(next(n for n in nodes if n.node_id == dead), allow_graceful=False)
    thread.join(timeout=240)

    assert "error" not in outcome, outcome.get("error")
    summary = outcome["summary"]
    lines = {line.society: line for line in summary.per_society}
    assert lines[victim].node not in ("", dead)  # finished on the node still alive
    assert {line.node for line in lines.values()} <= {n.node_id for n in nodes}
    assert _shards(run) == _shards(reference) and summary.samples_written == 2 * ROUNDS * 3


def test_addresses_name_the_host_and_port_ray_would_dial():
    assert endpoint("ray://head:10001") == ("head", 10001)
    assert endpoint("ray://head") == ("head", 10001)
    assert endpoint("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert endpoint("[::1]:6379") == ("::1", 6379)
    assert endpoint("auto") is None and endpoint("head") is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_address_nobody_answers_is_one_line_at_once():
    address = f"ray://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    with pytest.raises(AmphoreusError, match=r"nothing answers at 127\.0\.0\.1:\d+ .*expected a running Ray") as err:
        probe(address, 60)
    assert "\n" not in str(err.value) and time.monotonic() - started < 5


def test_simulate_at_an_unreachable_cluster_is_one_error_line(cli, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'amphoreus-graph[ray]')")
    address = f"ray://127.0.0.1:{_free_port()}"
    args = ["--societies", "2", "--scenario", "trio", "--engine", "ray", "--address", address, "--quiet"]
    started = time.monotonic()
    code, _, err = cli("simulate", *args, "--out", str(tmp_path / "r"))
    assert code == 2 and f"--address {address}: nothing answers at 127.0.0.1:" in err and "Traceback" not in err
    assert time.monotonic() - started < 30 and not (tmp_path / "r").exists()  # nothing written


class _Ray:
    """Stands in for `ray`: `init` blocks until released (a port that answers but is not Ray), or raises."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error, self.released = error, threading.Event()

    def init(self, **kwargs: object) -> None:
        if self.error is not None:
            raise self.error
        self.released.wait()


def test_a_cluster_that_never_answers_is_one_line_after_the_timeout():
    stuck = _Ray()
    started = time.monotonic()
    try:
        with pytest.raises(AmphoreusError, match=r"^--address auto: no answer from Ray within 0\.3 s; expected") as err:
            join(stuck, "auto", 0.3)
    finally:
        stuck.released.set()
    assert "\n" not in str(err.value) and time.monotonic() - started < 3


def test_ray_refusing_to_join_is_one_line():
    refused = _Ray(ConnectionError("Could not find any running Ray instance.\nPlease specify one."))
    with pytest.raises(AmphoreusError) as err:
        join(refused, "auto", 5)
    assert str(err.value).startswith("--address auto: cannot join Ray (ConnectionError: Could not find any running")
    assert "\n" not in str(err.value)
