"""Privacy under adversarial names: random cases on embedded Chroma and on a real `chroma run` server.

    .venv/bin/python benchmarks/privacy.py                  # 2,000 cases per backend, a readable table
    .venv/bin/python benchmarks/privacy.py --json           # one JSON object on stdout
    .venv/bin/python benchmarks/privacy.py --cases 200      # fewer cases

A case (amphoreus_graph/testing/privacy_cases.py, shared with the conformance suite's property test) is two
societies in one client whose names may slug alike, 3-6 heirs drawn from adversarial names (accents, combining
marks, NFC/NFD twins, CJK, emoji, spaces, punctuation, names that slug identically, "access", "public", "*",
"PUBLIC", names shaped like storage names) or random strings over such characters, 3-14 events (some public,
identical texts likely), and
one recall per asking heir with k of 1-8. Each block of 100 cases runs in a fresh process on a fresh store. Each
recalled record is checked against what the heir may see: its own society's public records and its own private
records of events it witnessed. `leaked` counts private records that reached anyone else (the figure that must be
0); `mislabelled` (public flag or text wrong), `missed` (fewer than min(k, visible) or a record twice) and
`collisions` (two identities, or an identity and the store's own collection, sharing a storage name) must be 0 too.
The real embedder is used throughout.

The JSON also goes to benchmarks/results/privacy.json.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the case generator lives beside the tests

from bench_common import environment, publish, results_options
from chromadb.api import ClientAPI

from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma
from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.testing.privacy_cases import random_case, run_case
from tests.chroma_server import chroma_server

RESULTS = Path(__file__).resolve().parent / "results" / "privacy.json"
# Each block of cases runs in a fresh process with a fresh store (and, for the server backend, a fresh server):
# Chroma keeps resources of deleted collections (chroma-core/chroma#3336), about 2.5 MB per collection created and
# dropped, so one process or server over 2,000 cases (~12 collections each) grew past 13-24 GB and was OOM-killed.
BLOCK = 100
PACKAGES = ("chromadb", "numpy")
KEYS = ("cases", "agents", "events", "recalled", "leaked", "mislabelled", "missed", "collisions")


@contextmanager
def backend(kind: str, root: Path) -> Iterator[ClientAPI]:
    """An embedded PersistentClient in a fresh dir under `root`, or a client of a fresh `chroma run` server."""
    root.mkdir(parents=True)
    if kind == "embedded":
        client, lock = open_chroma(root / "embedded")
        try:
            yield client
        finally:
            if lock is not None:
                lock.release()
        return
    with chroma_server(root) as url:
        yield open_chroma(url=url)[0]


def run_block(kind: str, root: str, seed: int, block: int, cases: int) -> tuple[dict[str, int], list[str]]:
    """`cases` cases on a fresh store of `kind` (run in a process of its own); totals and a few examples."""
    rng = random.Random(f"{seed}-{kind}-{block}")
    embedder = default_embedder()
    totals = dict.fromkeys(KEYS, 0)
    examples: list[str] = []
    with backend(kind, Path(root) / f"{kind}-{block}") as client:
        for _ in range(cases):
            case = random_case(rng)
            outcome = run_case(lambda society: ChromaIndex(client, society), embedder, case)
            totals["cases"] += 1
            totals["agents"] += len(case.agents)
            totals["events"] += len(case.events)
            totals["recalled"] += outcome.recalled
            for key, found in (
                ("leaked", outcome.leaks),
                ("mislabelled", outcome.mislabelled),
                ("missed", outcome.missed),
                ("collisions", outcome.collisions),
            ):
                totals[key] += len(found)
                examples += found[: max(0, 5 - len(examples))]
    return totals, examples


def run_backend(kind: str, cases: int, seed: int, root: Path) -> dict[str, Any]:
    totals = dict.fromkeys(KEYS, 0)
    examples: list[str] = []
    started = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(1, maxtasksperchild=1) as pool:  # a fresh process per block
        blocks = [(kind, str(root), seed, block, min(BLOCK, cases - block)) for block in range(0, cases, BLOCK)]
        for block_totals, block_examples in pool.starmap(run_block, blocks, chunksize=1):
            totals = {key: totals[key] + block_totals[key] for key in KEYS}
            examples += block_examples[: max(0, 5 - len(examples))]
    wall = time.perf_counter() - started
    return {**totals, "wall_s": round(wall, 1), "cases_per_s": round(cases / wall, 2), "examples": examples}


def table(report: dict[str, Any]) -> str:
    lines = [f"privacy benchmark: {report['settings']['cases']} adversarial cases per backend (seed {report['seed']})"]
    header = ("backend", "cases", "recalled", "leaked", "mislabel", "missed", "names")
    lines.append("  {:<9} {:>6} {:>9} {:>7} {:>9} {:>7} {:>6}".format(*header))
    for kind, r in report["backends"].items():
        lines.append(
            f"  {kind:<9} {r['cases']:>6} {r['recalled']:>9} {r['leaked']:>7} {r['mislabelled']:>9} "
            f"{r['missed']:>7} {r['collisions']:>6}   ({r['wall_s']} s)"
        )
        lines += [f"    e.g. {e}" for e in r["examples"]]
    lines.append("leaked = private records recalled by a non-owner (must be 0)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per backend")
    parser.add_argument("--backends", default="embedded,server", help="comma-separated: embedded, server")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.backends.split(",") if k.strip()]
    if not kinds or any(k not in ("embedded", "server") for k in kinds) or args.cases < 1:
        parser.error("--backends: expected embedded and/or server; --cases at least 1")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="amphoreus-privacy-") as tmp:
        results = {kind: run_backend(kind, args.cases, args.seed, Path(tmp)) for kind in kinds}
    report = {
        "benchmark": "privacy",
        "seed": args.seed,
        "leaked": {kind: r["leaked"] for kind, r in results.items()},
        "goals": {"no private record reaches a non-owner": all(r["leaked"] == 0 for r in results.values())},
        "backends": results,
        "settings": {"cases": args.cases, "backends": kinds, "block": BLOCK, "embedder": "all-MiniLM-L6-v2"},
        "environment": environment(PACKAGES, load_before),
    }
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0 if report["goals"]["no private record reaches a non-owner"] else 1


if __name__ == "__main__":
    sys.exit(main())
