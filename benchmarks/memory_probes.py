"""Single Chroma calls, timed without Remembrance around them, for the memory benchmark (see memory.py): what
the store's own writes cap `write_ratio` at, and what each kind of call costs on a filled collection."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from memory_store import chroma_index, chroma_store
from memory_timing import median_ms, ms

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.memory.chroma_index import HOLDER, open_collection
from amphoreus_graph.memory.holder_tails import with_tail
from amphoreus_graph.memory.naming import agent_collection
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.remembrance import Remembrance

Row = tuple[MemoryRecord, list[float]]
Writer = Callable[[Any, list[Row]], None]


def probe_write_calls(
    tmp_dir: str | None,
    embedder: Any,
    agents: list[str],
    batches: list[list[MemoryEvent]],
    vectors: list[Any],
    raw_encode_s: float,
) -> dict[str, Any]:
    """The same rounds' records written, without embedding, three ways: as remember writes them (one upsert per
    agent per round, public records in every agent's collection); as one upsert per round into a single collection
    (each record once); and as that one upsert with ids and vectors only (no documents, no metadata), the least
    any Chroma layout that keeps a vector per record must write. Each gives a ceiling on `write_ratio`:
    raw encode time / (raw encode time + that write time), over the same rounds."""
    rounds = [_round_rows(batch, vecs, agents) for batch, vecs in zip(batches, vectors, strict=True)]
    rows_per_round = [per_owner for per_owner, _ in rounds]
    per_owner_s = _time_per_owner_upserts(tmp_dir, embedder, agents, rows_per_round)
    one_call_s = {
        label: _time_one_upsert_per_round(tmp_dir, embedder, label, writer, [single for _, single in rounds])
        for label, writer in (("full", _upsert), ("vectors_only", _upsert_vectors_only))
    }
    n = len(rows_per_round)

    def ceiling(write_s: float) -> float:
        return round(raw_encode_s / (raw_encode_s + write_s), 4)

    return {
        "per_owner_upserts_ms_per_round": ms(per_owner_s / n),
        "one_upsert_ms_per_round": ms(one_call_s["full"] / n),
        "one_upsert_vectors_only_ms_per_round": ms(one_call_s["vectors_only"] / n),
        "upserts_per_round": round(sum(len(r) for r in rows_per_round) / n, 2),
        "raw_encode_ms_per_round": ms(raw_encode_s / n),
        "write_ratio_ceiling": {
            "per_owner_upserts": ceiling(per_owner_s),
            "one_upsert": ceiling(one_call_s["full"]),
            "one_upsert_vectors_only": ceiling(one_call_s["vectors_only"]),
        },
    }


def _round_rows(batch: list[MemoryEvent], vectors: Any, agents: list[str]) -> tuple[dict[str, list[Row]], list[Row]]:
    """A round's records with their vectors, by the collection remember files them in (a public record in every
    agent's), and each record once."""
    rows: dict[str, list[Row]] = {}
    single: list[Row] = []
    for event, vector in zip(batch, vectors, strict=True):
        for owner in [PUBLIC] if event.public else list(dict.fromkeys(event.witnesses)):
            row = (MemoryRecord.of(event, owner, event.importance), vector.tolist())
            single.append(row)
            for agent in agents if event.public else [owner]:
                rows.setdefault(agent, []).append(row)
    return rows, single


def _upsert(collection: Any, batch: list[Row]) -> None:
    collection.upsert(
        ids=[r.id for r, _ in batch],
        documents=[r.text for r, _ in batch],
        metadatas=[r.metadata() for r, _ in batch],
        embeddings=[v for _, v in batch],
    )


def _upsert_vectors_only(collection: Any, batch: list[Row]) -> None:
    collection.upsert(ids=[r.id for r, _ in batch], embeddings=[v for _, v in batch])


def _time_per_owner_upserts(
    tmp_dir: str | None, embedder: Any, agents: list[str], rows_per_round: list[dict[str, list[Row]]]
) -> float:
    """Seconds to write the rounds as the store's old layout did: one upsert per agent's own collection a round."""
    with chroma_store(tmp_dir, "bench-probe-per-owner", agents, embedder) as (memory, _):
        client = chroma_index(memory).client
        own = {owner: open_collection(client, agent_collection("bench-probe", owner), "cosine") for owner in agents}
        started = time.perf_counter()
        for rows in rows_per_round:
            for owner, owner_rows in rows.items():
                _upsert(own[owner], owner_rows)
        return time.perf_counter() - started


def _time_one_upsert_per_round(
    tmp_dir: str | None, embedder: Any, label: str, writer: Writer, single_rows_per_round: list[list[Row]]
) -> float:
    """Seconds to write the rounds as one upsert each into a single collection holding every owner's records."""
    with chroma_store(tmp_dir, f"bench-probe-single-{label}", [], embedder) as (memory, _):
        single = chroma_index(memory).client.get_or_create_collection(
            "m-bench-probe-all-owners", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        started = time.perf_counter()
        for rows in single_rows_per_round:
            writer(single, rows)
        return time.perf_counter() - started


def probe_recall_calls(
    memory: Remembrance, agents: list[str], embedder: Any, queries: list[tuple[str, str]], fetch: int
) -> dict[str, float]:
    """Median cost of single Chroma calls on this store, for what-if estimates (the society's collection, searches
    filtered to one agent's rows as recall's are)."""
    agent = agents[0]
    own = chroma_index(memory)._collection(agent)
    mine: Any = {HOLDER: agent}
    vectors = [with_tail(v, agent) for v in embedder.encode([q for _, q in queries[:40]])]  # as ChromaIndex asks
    got = own.query(query_embeddings=vectors[:1], n_results=fetch, where=mine, include=[])
    ids = got["ids"][0]
    metas = own.get(ids=ids[:3], include=["metadatas"])["metadatas"]
    return {
        "count": median_ms(lambda i: own.count()),
        f"query n={fetch} documents+metadatas+distances": median_ms(
            lambda i: own.query(
                query_embeddings=[vectors[i % len(vectors)]],
                n_results=fetch,
                where=mine,
                include=["documents", "metadatas", "distances"],
            )
        ),
        f"query n={fetch} distances only": median_ms(
            lambda i: own.query(
                query_embeddings=[vectors[i % len(vectors)]], n_results=fetch, where=mine, include=["distances"]
            )
        ),
        f"query n={fetch} 12 vectors in one call": median_ms(
            lambda i: own.query(
                query_embeddings=vectors[:12],
                n_results=fetch,
                where=mine,
                include=["documents", "metadatas", "distances"],
            ),
            10,
        ),
        "update 3 records (metadata only)": median_ms(lambda i: own.update(ids=ids[:3], metadatas=metas), 20),
        "get 3 records by id": median_ms(lambda i: own.get(ids=ids[:3], include=["metadatas"])),
        "embed one query (the embedder's model, uncached)": median_ms(
            lambda i: embedder.encoder.encode([queries[i % len(queries)][1]], 1)
        ),
    }
