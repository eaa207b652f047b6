"""ChromaStore against LangGraph's InMemoryStore at 10,000 items: what a LangGraph app pays for a persistent store.

The workload is a long-term memory's: N items spread over users' namespaces `("users", <user>, "memories")`, each
value `{"text", "kind", "score", "n"}` with `text` indexed. Embeddings are a deterministic hash (64 dims), so the
figures are the stores' own cost, not a model's. Measured per store, median milliseconds over repeats: a single
put (an overwrite) and get; a search in one namespace with a value filter; a filter-only search over every
namespace; the newest items of every namespace; a semantic search in one namespace and, with a filter, over all;
`list_namespaces` (all, and to depth 2); and 100 concurrent `aget`s; for ChromaStore also how long reopening the
filled store takes. ChromaStore runs on an embedded `PersistentClient` in a temporary directory, as `langgraph dev`
uses it. JSON goes to benchmarks/results/langgraph_store.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import numpy as np  # noqa: E402
from chromadb.config import Settings  # noqa: E402
from langgraph.store.base import BaseStore, PutOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from amphoreus_graph.memory.langgraph_store import ChromaStore  # noqa: E402
from benchmarks.bench_common import environment, median_ms, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "langgraph_store.json"
PACKAGES = ("chromadb", "langgraph", "langgraph-checkpoint")
DIMS = 64
KINDS = ("fact", "preference", "episode", "plan", "feeling")
WORDS = ("river", "lantern", "harvest", "orchard", "thunder", "ledger", "violin", "meadow", "copper", "harbor", "ember")


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic unit vector per text (hash-seeded): stands in for a model at no cost."""
    out = []
    for text in texts:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(DIMS)
        out.append((vector / np.linalg.norm(vector)).tolist())
    return out


def items(n: int, users: int) -> list[PutOp]:
    ops = []
    for i in range(n):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7))
        value = {"text": f"memory {i}: {words}", "kind": KINDS[i % len(KINDS)], "score": i % 100, "n": i}
        ops.append(PutOp(("users", f"u{i % users:03d}", "memories"), f"m{i:05d}", value))
    return ops


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median milliseconds of `repeat` calls, to the microsecond."""
    return round(median_ms(fn, repeat), 3)


def measure(store: BaseStore, ops: list[PutOp], repeat: int) -> dict[str, Any]:
    started = time.perf_counter()
    for start in range(0, len(ops), 1000):
        store.batch(ops[start : start + 1000])
    load_s = time.perf_counter() - started
    one_ns = ("users", "u042", "memories")
    counter = iter(range(10**9))

    async def concurrent_gets() -> None:
        await asyncio.gather(*(store.aget(op.namespace, op.key) for op in ops[:100]))

    return {
        "load_s": round(load_s, 2),
        "put_ms": timed(lambda: store.put(one_ns, "m00042", {"text": f"rewritten {next(counter)}", "n": 42}), repeat),
        "get_ms": timed(lambda: store.get(one_ns, "m00142"), repeat),
        "search_namespace_filter_ms": timed(lambda: store.search(one_ns, filter={"kind": "plan"}), repeat),
        "search_filter_only_ms": timed(
            lambda: store.search(("users",), filter={"kind": "plan", "score": {"$gte": 90}}, limit=10), repeat
        ),
        "search_newest_ms": timed(lambda: store.search(("users",), limit=10), repeat),
        "search_query_namespace_ms": timed(lambda: store.search(one_ns, query="harbor lantern", limit=10), repeat),
        "search_query_filter_ms": timed(
            lambda: store.search(("users",), query="harbor lantern", filter={"kind": "plan"}, limit=10), repeat
        ),
        "list_namespaces_ms": timed(lambda: store.list_namespaces(limit=1000), repeat),
        "list_namespaces_depth2_ms": timed(lambda: store.list_namespaces(max_depth=2, limit=1000), repeat),
        "concurrent_100_aget_ms": timed(lambda: asyncio.run(concurrent_gets()), repeat),
    }


def run(n: int, users: int, repeat: int) -> dict[str, Any]:
    ops = items(n, users)
    index: Any = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    out = {"inmemory": measure(InMemoryStore(index=index), ops, repeat)}
    with tempfile.TemporaryDirectory(prefix="amphoreus-lgstore-") as folder:
        client = chromadb.PersistentClient(path=folder, settings=Settings(anonymized_telemetry=False))
        out["chroma"] = measure(ChromaStore(client, index=index), ops, repeat)
        started = time.perf_counter()
        ChromaStore(client, index=index)
        out["chroma"]["reopen_s"] = round(time.perf_counter() - started, 2)
    out["ratio"] = {
        k: round(out["chroma"][k] / out["inmemory"][k], 2) for k in out["inmemory"] if out["inmemory"][k] > 0
    }
    return out


def table(report: dict[str, Any]) -> str:
    stores = report["stores"]
    lines = [f"{report['items']} items in {report['users']} namespaces; median of {report['repeat']} (ms, load in s)"]
    lines.append(f"{'':>28} {'InMemoryStore':>14} {'ChromaStore':>12} {'ratio':>7}")
    for key in stores["chroma"]:
        ratio = stores["ratio"].get(key, "")
        lines.append(f"{key:>28} {stores['inmemory'].get(key, '')!s:>14} {stores['chroma'][key]:>12} {ratio!s:>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=100, help="namespaces the items are spread over")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    report: dict[str, Any] = {"items": args.items, "users": args.users, "repeat": args.repeat}
    report["stores"] = run(args.items, args.users, args.repeat)
    report["environment"] = environment(PACKAGES, load_before)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
