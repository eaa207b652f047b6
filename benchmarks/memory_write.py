"""The memory benchmark's write part (see memory.py): rounds of events through `Remembrance.remember` against
the same texts through the embedder's own model uncached and through sentence-transformers on PyTorch."""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import numpy as np
from memory_instrument import instrumented
from memory_probes import probe_write_calls
from memory_store import chroma_store, disk_mib
from memory_timing import Timer, ms
from memory_workload import make_events

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.memory.records import PUBLIC
from amphoreus_graph.models.embedder import Embedder

STEPS = ("raw", "torch", "remember")  # what each round is written by, in rotating order


def torch_encoder(embedder: Any) -> Any:
    """sentence-transformers on PyTorch for the embedder's model: itself when it already runs there."""
    if embedder.backend == "torch":
        return embedder.encoder
    return Embedder(embedder.name, backend="torch").encoder


def bench_write(args: argparse.Namespace, embedder: Any, agents: list[str]) -> dict[str, Any]:
    """Write figures as the median over repeats of each repeat's ratios, plus the probe's ceilings."""
    batches = make_events(random.Random(args.seed), args.write_rounds, args.batch, args.public_fraction)
    texts = [[e.text for e in b] for b in batches]
    # Baselines: the embedder's own model uncached ("raw"), and sentence-transformers on PyTorch ("torch"), the
    # usual way to run this model (the same encoder when the embedder itself runs on PyTorch).
    encoders = {"raw": embedder.encoder, "torch": torch_encoder(embedder)}
    for t in texts:  # untimed warm-up pass: every batch shape the timed passes will see
        for encoder in encoders.values():
            encoder.encode(t, embedder.batch_size)
    repeats: list[dict[str, Any]] = []
    vectors: list[np.ndarray] = []
    for rep in range(args.repeats):
        repeat, vectors = _write_repeat(args.tmp_dir, rep, embedder, encoders, agents, batches)
        repeats.append(repeat)
    mid = sorted(repeats, key=lambda r: r["ratio"])[len(repeats) // 2]
    probe = probe_write_calls(args.tmp_dir, embedder, agents, batches, vectors, mid["raw_encode_s"])
    return _write_summary(batches, repeats, mid, probe)


def _write_repeat(
    tmp_dir: str | None,
    rep: int,
    embedder: Any,
    encoders: dict[str, Any],
    agents: list[str],
    batches: list[list[MemoryEvent]],
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """One repeat's figures on a store that starts empty with the text cache cleared (so every text is really
    embedded), and the raw encoder's vectors for the probe."""
    timer = Timer()
    with chroma_store(tmp_dir, f"bench-write-{rep}", agents, embedder) as (memory, directory):
        embedder._cache.clear()
        with instrumented(memory, timer):
            seconds, vectors = _time_rounds(memory, rep, embedder.batch_size, encoders, batches)
        records = sum(len(memory.records(owner)) for owner in [*agents, PUBLIC])
        disk = disk_mib(directory, 2)
    return _repeat_figures(seconds, timer, batches, records, disk), vectors


def _time_rounds(
    memory: Any, rep: int, batch_size: int, encoders: dict[str, Any], batches: list[list[MemoryEvent]]
) -> tuple[dict[str, float], list[np.ndarray]]:
    """Seconds per step over all rounds. Round by round, the baselines and remember back to back (order
    rotating), so that load from elsewhere falls on all alike."""
    seconds = dict.fromkeys(STEPS, 0.0)
    vectors = []
    for i, batch in enumerate(batches):
        batch_texts = [e.text for e in batch]
        for step in STEPS[(i + rep) % 3 :] + STEPS[: (i + rep) % 3]:
            started = time.perf_counter()
            if step == "remember":
                memory.remember(batch)
            elif step == "raw":
                vectors.append(encoders["raw"].encode(batch_texts, batch_size))
            else:
                encoders["torch"].encode(batch_texts, batch_size)
            seconds[step] += time.perf_counter() - started
    return seconds, vectors


def _repeat_figures(
    seconds: dict[str, float], timer: Timer, batches: list[list[MemoryEvent]], records: int, disk: float
) -> dict[str, Any]:
    """Texts per second of each step, the ratios, and where remember's time went (from the timing wrappers)."""
    n_texts, rounds = sum(len(b) for b in batches), len(batches)
    raw_s, remember_s = seconds["raw"], seconds["remember"]
    upserts = timer.seconds["own.upsert"]
    upsert_calls = timer.calls["own.upsert"]
    return {
        "raw_encode_s": round(raw_s, 4),
        "remember_s": round(remember_s, 4),
        "raw_encode_texts_per_s": round(n_texts / raw_s, 1),
        "remember_texts_per_s": round(n_texts / remember_s, 1),
        "ratio": round(raw_s / remember_s, 4),
        "torch_encode_texts_per_s": round(n_texts / seconds["torch"], 1),
        "ratio_vs_torch": round(seconds["torch"] / remember_s, 4),
        "remember_breakdown_ms_per_round": {
            "embed (Embedder.encode)": ms(timer.seconds["embed"] / rounds),
            "chroma upserts": ms(upserts / rounds),
            "rest (rating, MemoryRecord, metadata, lists)": ms(
                (remember_s - timer.seconds["embed"] - upserts) / rounds
            ),
        },
        "upsert_calls_per_round": round(upsert_calls / rounds, 2),
        "ms_per_upsert_call": ms(upserts / max(1, upsert_calls)),
        "records_written": records,
        "disk_mib": disk,
    }


def _write_summary(
    batches: list[list[MemoryEvent]], repeats: list[dict[str, Any]], mid: dict[str, Any], probe: dict[str, Any]
) -> dict[str, Any]:
    """The medians over repeats (each repeat's ratio, not a ratio of medians) and what the workload was."""
    events = [e for b in batches for e in b]
    chars = [len(e.text) for e in events]
    return {
        "write_ratio": round(statistics.median(r["ratio"] for r in repeats), 4),
        "write_ratio_vs_torch": round(statistics.median(r["ratio_vs_torch"] for r in repeats), 4),
        "torch_encode_texts_per_s": round(statistics.median(r["torch_encode_texts_per_s"] for r in repeats), 1),
        "remember_texts_per_s": round(statistics.median(r["remember_texts_per_s"] for r in repeats), 1),
        "raw_encode_texts_per_s": round(statistics.median(r["raw_encode_texts_per_s"] for r in repeats), 1),
        "texts": len(events),
        "rounds": len(batches),
        "records_per_round": round(mid["records_written"] / len(batches), 2),
        "text_chars": {"mean": round(statistics.mean(chars), 1), "min": min(chars), "max": max(chars)},
        "witnesses_mean": round(statistics.mean(len(e.witnesses) for e in events if not e.public), 2),
        "public_events": sum(e.public for e in events),
        "median_repeat": mid,
        "repeats": repeats,
        "probe_write_calls": probe,
    }
