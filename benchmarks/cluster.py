"""Benchmark the Scepter on a multi-node Ray cluster: samples/s at 1, 2 and 4 worker nodes, the same workload.

    .venv/bin/python benchmarks/cluster.py --json     # one JSON object on stdout
    .venv/bin/python benchmarks/cluster.py            # a readable table

For each node count a fresh cluster is started with Ray's own multi-node test cluster (`ray.cluster_utils.Cluster`:
a head with no CPUs, which only schedules, and N worker nodes of `--cpus-per-node` CPUs, each a raylet of its
own), and the same Scepter plan runs on it through `address` (offline Path policy, real memory: an embedded Chroma
directory per society, the real embedder loaded in every worker). Two rates per run: `end_to_end` is samples over
the whole `Scepter.run()` (joining the cluster, starting workers, loading the embedder in each, merging);
`steady` is samples per second from the first sample written to the last (the workers' own pace).

`slope_per_node` is the least-squares slope of the steady rate over the node count; `hours_to_33550336` is
33,550,336 samples at each measured steady rate. All nodes run on this machine and share its cores: past as many
nodes as cores the figure shows Ray's overhead and the cores' ceiling, not what more machines would add.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench_common import environment, publish, results_options, whole_numbers

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.events import SocietyUpdate
from amphoreus_graph.scepter import Scepter, ScepterConfig
from amphoreus_graph.society.config import RunConfig

RESULTS = Path(__file__).resolve().parent / "results" / "cluster.json"
PACKAGES = ("ray", "langgraph", "chromadb", "sentence-transformers", "torch", "pydantic")
TARGET_SAMPLES = 33_550_336


def start_cluster(nodes: int, cpus: int) -> Any:
    """A head that only schedules, and `nodes` worker nodes with `cpus` CPUs each."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(nodes):
        cluster.add_node(num_cpus=cpus)
    cluster.wait_for_nodes()
    return cluster


async def one_run(address: str, args: argparse.Namespace) -> dict[str, Any]:
    """The plan on the cluster at `address`: samples, the two rates, and the nodes each society finished on."""
    with tempfile.TemporaryDirectory(prefix="amphoreus-cluster-") as tmp:
        plan = ScepterConfig(
            societies=args.societies,
            scenarios=[args.scenario],
            template=RunConfig(
                scenario=args.scenario, cycles=1, rounds=args.rounds, seed=args.seed, out=Path(tmp) / "bench"
            ),
            engine="ray",
            address=address,
        )
        scepter = Scepter(plan)
        first: float | None = None
        first_samples = 0
        last = started = time.perf_counter()
        async for event in scepter.stream():
            if isinstance(event, SocietyUpdate) and scepter.tracker.samples > 0:
                last = time.perf_counter()
                if first is None:
                    first, first_samples = last, scepter.tracker.samples
        wall = time.perf_counter() - started
        summary = scepter.summary
    samples = summary.samples_written
    steady_s = last - first if first is not None else 0.0
    return {
        "samples": samples,
        "wall_s": round(wall, 3),
        "end_to_end_samples_per_s": round(samples / wall, 2),
        "steady_samples_per_s": round((samples - first_samples) / steady_s, 2) if steady_s > 0 else 0.0,
        "time_to_first_sample_s": round((first or started) - started, 3),
        "nodes_used": len({line.node for line in summary.per_society}),
    }


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    import ray

    scenario = scenario_of(args.scenario)
    load_before = os.getloadavg()
    runs: dict[str, dict[str, Any]] = {}
    for nodes in args.nodes:
        cluster = start_cluster(nodes, args.cpus_per_node)
        try:
            runs[str(nodes)] = asyncio.run(one_run(cluster.address, args))
        finally:
            if ray.is_initialized():
                ray.shutdown()
            cluster.shutdown()
    steady = {n: r["steady_samples_per_s"] for n, r in runs.items()}
    return {
        "benchmark": "cluster",
        "steady_samples_per_s": steady,
        "end_to_end_samples_per_s": {n: r["end_to_end_samples_per_s"] for n, r in runs.items()},
        "slope_per_node": round(slope([(float(n), rate) for n, rate in steady.items()]), 2),
        "hours_to_33550336": {n: round(TARGET_SAMPLES / rate / 3600, 1) for n, rate in steady.items() if rate > 0},
        "settings": {
            "cluster": "ray.cluster_utils.Cluster on one machine: a head with 0 CPUs, N worker nodes",
            "cpus_per_node": args.cpus_per_node,
            "societies": args.societies,
            "scenario": args.scenario,
            "agents": len(scenario.agents),
            "rounds": args.rounds,
            "seed": args.seed,
            "policy": "offline (OfflinePathPolicy)",
            "memory": "Remembrance on an embedded PersistentClient per society (temp dir), real embedder per worker",
            "steady": "samples written after the first one, over the time from the first sample to the last",
        },
        "runs": runs,
        "environment": environment(PACKAGES, load_before),
    }


def table(report: dict[str, Any]) -> str:
    s, env = report["settings"], report["environment"]
    lines = [
        f"Scepter on a Ray test cluster: {s['societies']} societies of {s['scenario']} ({s['agents']} agents), "
        f"{s['rounds']} rounds, offline policy, real memory; {s['cpus_per_node']} CPU per worker node, "
        f"{env['cpu_count']} cores in the machine (load before {env['loadavg_before'][0]})",
        "",
    ]
    for n, run in report["runs"].items():
        hours = report["hours_to_33550336"].get(n, "-")
        lines.append(
            f"  {n} node(s): steady {run['steady_samples_per_s']:>7.1f} samples/s, end to end "
            f"{run['end_to_end_samples_per_s']:>6.1f} ({run['samples']} in {run['wall_s']} s, first sample after "
            f"{run['time_to_first_sample_s']} s, {run['nodes_used']} node(s) used); {hours} h to 33,550,336"
        )
    lines += ["", f"  slope: {report['slope_per_node']} samples/s per added worker node (all on this machine's cores)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--nodes", type=whole_numbers, default="1,2,4", help="comma-separated worker node counts")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--societies", type=int, default=8)
    parser.add_argument("--scenario", default="amphoreus")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if min(args.nodes) < 1 or min(args.cpus_per_node, args.societies, args.rounds) < 1:
        parser.error("--nodes, --cpus-per-node, --societies and --rounds must be at least 1")
    try:
        import ray  # noqa: F401 - only to say plainly that it is missing
    except ImportError:
        parser.error("Ray is not installed (pip install 'amphoreus-graph[ray]')")
    report = benchmark(args)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
