"""Memory on real Chroma with the real embedder: privacy, retention across resets, idempotent writes."""

from __future__ import annotations

import uuid

from amphoreus_graph.memory.records import MemoryEvent
from amphoreus_graph.memory.store import ChromaMemory, open_chroma
from amphoreus_graph.scenario import Retention, RetentionMode

HEIRS = ["Cyrene", "Phainon", "Anaxagoras"]


def _memory(embedder, tmp_path=None) -> ChromaMemory:
    """A fresh society: in-process ephemeral Chroma is shared, so each test names its own."""
    client, lock = open_chroma(tmp_path)
    return ChromaMemory(client, uuid.uuid4().hex, HEIRS, embedder, lock)


def test_only_witnesses_recall_an_event(embedder):
    memory = _memory(embedder)
    memory.remember(
        [
            MemoryEvent(
                id="e1",
                text="Cyrene hid the Coreflame of Time under the olive tree.",
                cycle=1,
                round=1,
                witnesses=["Cyrene"],
            )
        ]
    )
    found = memory.recall({h: "Where is the Coreflame of Time hidden?" for h in HEIRS}, k=5)
    assert [m.text for m in found["Cyrene"]] == ["Cyrene hid the Coreflame of Time under the olive tree."]
    assert found["Phainon"] == [] and found["Anaxagoras"] == []


def test_recall_ranks_by_similarity(embedder):
    memory = _memory(embedder)
    texts = ["The Black Tide flooded the harbour.", "Anaxagoras read about the stars.", "A feast of olives in Okhema."]
    memory.remember([MemoryEvent(id=f"e{i}", text=t, cycle=1, round=i, witnesses=HEIRS) for i, t in enumerate(texts)])
    top = memory.recall({"Phainon": "astronomy and the night sky"}, k=3)["Phainon"]
    assert top[0].text == "Anaxagoras read about the stars." and top[0].score > top[-1].score


def test_retention_keeps_all_echoes_or_nothing_and_is_idempotent(embedder, tmp_path):
    memory = _memory(embedder, tmp_path)
    memory.remember(
        [
            MemoryEvent(id=f"e{i}", text=f"Event number {i}", cycle=1, round=i, witnesses=HEIRS, importance=1 + i)
            for i in range(6)
        ]
    )
    rules = {
        "Cyrene": Retention(mode=RetentionMode.ALL),
        "Phainon": Retention(mode=RetentionMode.NONE),
        "Anaxagoras": Retention(mode=RetentionMode.ECHOES, keep=2, decay=0.5),
    }
    assert memory.carry_over(rules, next_cycle=2) == {"Cyrene": 6, "Phainon": 0, "Anaxagoras": 2}
    snapshot = memory.dump()
    assert len(snapshot["Cyrene"]) == 6 and snapshot["Phainon"] == []
    echoes = {r["text"]: r["importance"] for r in snapshot["Anaxagoras"]}
    assert echoes == {"Event number 5": 3.0, "Event number 4": 2.5}
    memory.carry_over(rules, next_cycle=2)  # a replayed cycle end changes nothing
    assert memory.dump() == snapshot
    memory.close()


def test_remember_twice_files_once(embedder):
    memory = _memory(embedder)
    event = MemoryEvent(id="e1", text="Phainon swore an oath.", cycle=1, round=1, witnesses=["Phainon", "Cyrene"])
    assert memory.remember([event]) == 2
    memory.remember([event])
    assert [len(v) for v in memory.dump().values()] == [1, 1, 0]


def test_a_store_in_use_is_one_clear_error(embedder, tmp_path):
    import pytest

    from amphoreus_graph.errors import AmphoreusError

    first = _memory(embedder, tmp_path)
    with pytest.raises(AmphoreusError, match="in use by another running simulation"):
        open_chroma(tmp_path)
    first.close()
    open_chroma(tmp_path)[1].release()


async def test_remembrance_carries_a_cycle_summary_that_nihility_loses(tmp_path, embedder):
    from amphoreus_graph.society.runner import RunConfig, Simulation

    run = tmp_path / "recur"
    await Simulation(RunConfig(scenario="trio", cycles=2, rounds=2, out=run)).run()
    client, lock = open_chroma(run / "memory")
    memory = ChromaMemory(client, "recur", HEIRS, embedder, lock)
    rows = memory.dump()
    memory.close()
    echo = "Cycle 1 ended after 2 rounds"
    assert any(r["text"].startswith(echo) for r in rows["Cyrene"]), "Remembrance keeps the cycle's echo"
    assert len([r for r in rows["Cyrene"] if r["cycle"] == 1]) >= 3, "Remembrance keeps all of cycle 1"
    assert [r for r in rows["Phainon"] if r["cycle"] == 1] == [], "Destruction (retention: none) keeps nothing"
    assert [r for r in rows["Cyrene"] if r["cycle"] == 2], "and keeps the last cycle too"
    assert 0 < len(rows["Anaxagoras"]) <= 3, "Erudition keeps at most 3 echoes"
