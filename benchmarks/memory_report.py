"""The memory benchmark's report (see memory.py): the JSON object (headline figures first, then goals, settings,
the write and recall details, phase timings and the environment) and the readable table made from it."""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from bench_common import environment
from memory_build import UPSERT_BATCH
from memory_recall import WARMUP_ROUNDS

from amphoreus_graph.catalogs.scenario import MemoryConfig

PACKAGES = ("chromadb", "sentence-transformers", "transformers", "torch", "numpy", "pydantic")


@dataclass
class Measured:
    """What a run measured and with what; `started` and `load_before` are taken at its start, so the report's
    total and environment cover all of it."""

    agents: list[str]
    embedder: Any
    pool_texts: list[str]
    write: dict[str, Any]
    recall: dict[str, dict[str, Any]]
    timings_s: dict[str, Any]
    started: float
    load_before: tuple[float, float, float]


def report(args: argparse.Namespace, measured: Measured) -> dict[str, Any]:
    """The JSON report: headline figures first, then what produced them, then the details."""
    write, recall = measured.write, measured.recall
    return {
        "benchmark": "memory",
        **_headline(write, recall),
        "goals": _goals(write, recall),
        "settings": _settings(args, measured),
        "write": write,
        "recall": recall,
        "timings_s": {
            **measured.timings_s,
            "build_per_size": {s: r["build"]["wall_s"] for s, r in recall.items()},
            "total": round(time.perf_counter() - measured.started, 2),
        },
        "environment": environment(PACKAGES, measured.load_before),
    }


def _headline(write: dict[str, Any], recall: dict[str, Any]) -> dict[str, Any]:
    """The figures the goals and docs/benchmarks.md speak of, on top where a reader looks first."""

    def per_size(key: str, q: str) -> dict[str, float]:
        return {s: r[key][q] for s, r in recall.items()}

    return {
        "write_ratio": write["write_ratio"],
        "remember_texts_per_s": write["remember_texts_per_s"],
        "raw_encode_texts_per_s": write["raw_encode_texts_per_s"],
        "write_ratio_vs_torch": write["write_ratio_vs_torch"],
        "torch_encode_texts_per_s": write["torch_encode_texts_per_s"],
        "recall_p50_ms": per_size("recall_ms_with_embedding", "p50"),
        "recall_p99_ms": per_size("recall_ms_with_embedding", "p99"),
        "recall_p50_ms_without_embedding": per_size("recall_ms_without_embedding", "p50"),
        "recall_p99_ms_without_embedding": per_size("recall_ms_without_embedding", "p99"),
    }


def _goals(write: dict[str, Any], recall: dict[str, Any]) -> dict[str, bool]:
    """Whether the memory's goals are met; the recall goal only where its 100k size was measured."""
    goals = {"write_ratio >= 0.9": write["write_ratio"] >= 0.9}
    if "100000" in recall:
        goals["recall_p50_ms[100000] <= 10"] = recall["100000"]["recall_ms_with_embedding"]["p50"] <= 10
    return goals


def _settings(args: argparse.Namespace, measured: Measured) -> dict[str, Any]:
    """Everything a figure depends on, so two reports can be told apart without their command lines."""
    config, embedder = MemoryConfig(), measured.embedder
    return {
        "quick": args.quick,
        "sizes": args.sizes,
        "k": args.k,
        "overfetch": config.overfetch,
        "fetched_per_collection": args.k * config.overfetch,
        "recall_mode": config.mode.value,
        "agents": len(measured.agents),
        "public_records": args.public,
        "queries_per_size": args.queries,
        "warmup_recalls_per_heir": WARMUP_ROUNDS,
        "recall_query_embedding": "included in recall_p50_ms / recall_p99_ms (text cache cleared); "
        "recall_*_without_embedding: query texts pre-encoded, so recall's encode is a cache hit",
        "recall_now": "each recall at its own tick, so last-accessed updates happen whenever own records return",
        "vectors": args.vectors,
        "noise": args.noise if args.vectors == "perturbed" else None,
        "vector_pool_texts": len(measured.pool_texts),
        "upsert_batch_max": UPSERT_BATCH,
        "write_rounds": args.write_rounds,
        "write_batch_events": args.batch,
        "write_public_fraction": args.public_fraction,
        "embedder": embedder.name,
        "embedder_backend": embedder.backend,
        "embedder_batch_size": embedder.batch_size,
        "repeats": args.repeats,
        "statistic": "write: median of per-repeat ratios; recall: percentiles over the queries",
        "store": "Remembrance over ChromaIndex on chromadb.PersistentClient in a temp dir (removed afterwards)",
        "tmp_dir": args.tmp_dir or tempfile.gettempdir(),
        "seed": args.seed,
    }


def table(report: dict[str, Any]) -> str:
    """The report for a reader: write figures, recall percentiles per size, then each size's details."""
    lines = [*_write_lines(report), "", *_recall_lines(report)]
    for size, r in report["recall"].items():
        lines += ["", *_size_lines(size, r)]
    env, t = report["environment"], report["timings_s"]
    lines += [
        "",
        f"cpus={env['cpu_count']} torch_threads={env['torch_threads']} loadavg {env['loadavg_before']} -> "
        f"{env['loadavg_after']}; total {t['total']} s",
    ]
    return "\n".join(lines)


def _write_lines(report: dict[str, Any]) -> list[str]:
    s, w = report["settings"], report["write"]
    mid, p = w["median_repeat"], w["probe_write_calls"]
    lines = [
        f"memory benchmark: agents={s['agents']} k={s['k']} overfetch={s['overfetch']} vectors={s['vectors']} "
        f"queries={s['queries_per_size']}/size",
        "",
        f"write ({w['texts']} events in {w['rounds']} rounds of {s['write_batch_events']}, "
        f"{w['records_per_round']} records/round, median of {s['repeats']}):",
        f"  remember            {report['remember_texts_per_s']:>9.1f} texts/s",
        f"  raw encode ({s['embedder_backend']:<5})  {report['raw_encode_texts_per_s']:>9.1f} texts/s",
        f"  write_ratio         {report['write_ratio']:>9.3f}   (goal >= 0.9)",
        f"  torch encode (s-t)  {report['torch_encode_texts_per_s']:>9.1f} texts/s",
        f"  write_ratio_vs_torch {report['write_ratio_vs_torch']:>8.3f}",
    ]
    for label, v in mid["remember_breakdown_ms_per_round"].items():
        lines.append(f"    {label:<48} {v:>9.2f} ms/round")
    lines.append(f"    {mid['upsert_calls_per_round']} upserts/round at {mid['ms_per_upsert_call']} ms")
    lines.append(
        f"    probe: per-owner upserts {p['per_owner_upserts_ms_per_round']} ms/round vs one upsert "
        f"{p['one_upsert_ms_per_round']} ms/round ({p['one_upsert_vectors_only_ms_per_round']} ms vectors only); "
        f"raw encode {p['raw_encode_ms_per_round']} ms/round"
    )
    ceilings = ", ".join(f"{label} {v:.3f}" for label, v in p["write_ratio_ceiling"].items())
    lines.append(f"    write_ratio ceiling with Chroma writes as: {ceilings}")
    return lines


def _recall_lines(report: dict[str, Any]) -> list[str]:
    lines = [f"recall, one agent (ms)          {'p50':>8} {'p90':>8} {'p99':>8} {'mean':>8}"]
    for size, r in report["recall"].items():
        for label, key in (("with embedding", "recall_ms_with_embedding"), ("without", "recall_ms_without_embedding")):
            f = r[key]
            lines.append(
                f"  {size:>7} {label:<20} {f['p50']:>8.2f} {f['p90']:>8.2f} {f['p99']:>8.2f} {f['mean']:>8.2f}"
            )
    return lines


def _size_lines(size: str, r: dict[str, Any]) -> list[str]:
    b, without = r["build"], r["breakdown_mean_ms_without_embedding"]
    lines = [
        f"  {size} records: build {b['wall_s']} s (upsert {b['upsert_s']} s, {b['upsert_records_per_s']} rec/s), "
        f"disk {b['disk_mib']} MiB",
        f"    {'mean ms per recall':<44} {'with emb.':>10} {'without':>10}",
    ]
    for label, v in r["breakdown_mean_ms"].items():
        lines.append(f"    {label:<44} {v:>10.3f} {without[label]:>10.3f}")
    for label, f in (
        ("first recall per agent after build", r["first_recall_per_heir_after_build_ms"]),
        ("first recall per agent after reopen", r["cold_reopen"]["first_recall_per_heir_ms"]),
    ):
        lines.append(f"    {label:<56} p50 {f['p50']:>8.3f} ms  max {f['max']:>8.3f} ms")
    touch, label = r["touch_ms"], "touch (mark used memories, one write)"
    lines.append(f"    {label:<56} p50 {touch['p50']:>8.3f} ms  p99 {touch['p99']:>8.3f} ms")
    for label, v in r["probes_ms"].items():
        lines.append(f"    probe: {label:<37} {v:>8.3f} ms")
    return lines
