"""Ranking recalled candidates: w·recency + w·importance + w·relevance, each on a 0-1 scale, weighted per
scenario and discounted per cycle gone by; or plain cosine similarity.

Unlike Generative Agents we do not min-max normalise over the candidates: that stretches a tiny spread of
similarities to the full 0-1 range, so a clearly relevant old fact loses to any recent, important trifle.
Recency is `decay ** rounds since last access`, importance is `rating / 10`, relevance is cosine clipped at 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from amphoreus_graph.catalogs.scenario import MemoryConfig, RecallMode
from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord


def rank(
    candidates: Sequence[tuple[MemoryRecord, float]], now: Moment, config: MemoryConfig, k: int
) -> list[RecalledMemory]:
    """The k best of (record, cosine similarity) candidates; ties break by id so ranking is deterministic."""
    if not candidates or k <= 0:
        return []
    records = [r for r, _ in candidates]
    similarity = [s for _, s in candidates]
    recency = [config.recency_decay ** max(0, now.tick - r.last_accessed) for r in records]
    importance = [r.importance / 10.0 for r in records]
    if config.mode is RecallMode.COSINE:
        scores = list(similarity)
    else:
        w = config.weights
        scores = [
            (w.recency * rec + w.importance * imp + w.relevance * max(0.0, rel))
            * config.cycle_weight ** (now.cycle - r.cycle)
            for rec, imp, rel, r in zip(recency, importance, similarity, records, strict=True)
        ]
    order = sorted(range(len(records)), key=lambda i: (-scores[i], records[i].id))[:k]
    return [
        RecalledMemory(
            text=records[i].text,
            cycle=records[i].cycle,
            round=records[i].round,
            score=round(scores[i], 6),
            id=records[i].id,
            kind=records[i].kind.value,
            public=records[i].owner == PUBLIC,
            secret=records[i].secret,
            importance=records[i].importance,
            recency=round(recency[i], 6),
            relevance=round(similarity[i], 6),
        )
        for i in order
    ]
