"""What is particular to the shipped backends and the factory; what any backend must do is in the conformance
suite (amphoreus_graph.testing, run by tests/test_memory_conformance.py)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from pydantic import ValidationError

from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_index import (
    HOLDER,
    ROWS,
    SYNC_THRESHOLD,
    ChromaIndex,
    holder_prefix,
    open_chroma,
    open_collection,
)
from amphoreus_graph.memory.holder_tails import TAIL_WEIGHT, with_tail, without_tails
from amphoreus_graph.memory.index import RowChanges, Rows, nearest
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.naming import agent_collection, internal_collection
from amphoreus_graph.memory.records import SHARED_HOLDER
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store import MemorySpec, open_index, open_memory


def test_the_societys_collections_sync_their_index_every_few_writes(chroma_client):
    """Chroma's default (a sync every 1000 writes) makes each write slower as a society's store fills."""
    society = f"sync {uuid.uuid4().hex[:8]}"
    index = ChromaIndex(chroma_client, society)
    index.write([RowChanges("New", written=Rows(["a"], ["text"], [{"k": "v"}], [[1.0, 0.0, 0.0]]))])
    index.set_ticks(["New:a"], 3)
    for name in [internal_collection(society, ROWS), internal_collection(society, "access")]:
        reopened = chroma_client.get_collection(name, embedding_function=None)
        assert reopened.configuration["hnsw"]["sync_threshold"] == SYNC_THRESHOLD, name
    rows = chroma_client.get_collection(internal_collection(society, ROWS), embedding_function=None)
    assert rows.configuration["hnsw"]["space"] == "cosine"


def rows_as_written_before(memory: Remembrance, agent: str) -> Rows:
    """An agent's rows as versions before 2026-11-29 wrote them: its own, and its own copy of every public row."""
    own, public = memory.index.get(agent, vectors=True), memory.index.get(SHARED_HOLDER, vectors=True)
    return Rows(
        own.ids + public.ids,
        own.texts + public.texts,
        own.metadatas + public.metadatas,
        [*own.vectors, *public.vectors],
    )


def test_a_store_of_the_old_layout_is_moved_over_agent_by_agent_and_recalled_the_same(chroma_client, embedder):
    """Before, each agent had a collection of its own: a store an older version wrote is read as it was (its rows
    moved into the society's collection the first time an agent is touched, its old collection then deleted)."""
    society = f"old {uuid.uuid4().hex[:8]}"
    events = [
        MemoryEvent(id="e1", text="Cyrene hid the olive branch.", cycle=1, round=1, tick=1, witnesses=["Cyrene"]),
        MemoryEvent(id="e2", text="Phainon swore an oath.", cycle=1, round=1, tick=1, witnesses=["Phainon"]),
        MemoryEvent(id="e3", text="The tide rose.", cycle=1, round=2, tick=2, witnesses=[], public=True),
    ]
    fresh = Remembrance(InMemoryIndex(society), ["Cyrene", "Phainon"], embedder)
    fresh.remember(events)
    for agent in ["Cyrene", "Phainon"]:  # written as the old layout did: the rows as they are, one collection each
        rows = rows_as_written_before(fresh, agent)
        old = open_collection(chroma_client, agent_collection(society, agent), space="cosine")
        old.upsert(
            ids=rows.ids, documents=rows.texts, metadatas=rows.metadatas, embeddings=[list(v) for v in rows.vectors]
        )
    moved = Remembrance(ChromaIndex(chroma_client, society), ["Cyrene", "Phainon"], embedder)
    now = Moment(cycle=1, round=3, tick=3)
    query = {"Cyrene": "olive branch", "Phainon": "olive branch"}
    assert moved.recall(query, 5, now) == fresh.recall(query, 5, now)
    assert moved.tally() == fresh.tally(), "a run's checkpoint from before the public index still matches its store"
    assert moved.records("Cyrene") == fresh.records("Cyrene") and len(fresh.records("Cyrene")) == 1
    names = {c.name for c in chroma_client.list_collections()}
    assert not names & {agent_collection(society, a) for a in ["Cyrene", "Phainon"]}
    again = Remembrance(ChromaIndex(chroma_client, society), ["Cyrene", "Phainon"], embedder)
    assert again.records("Phainon") == fresh.records("Phainon")
    assert again.public_records() == fresh.public_records() and len(fresh.public_records()) == 1


def test_a_society_collection_without_holder_tails_is_moved_over_and_recalled_the_same(chroma_client, embedder):
    """Before holder tails, a society's rows were stored as their bare vectors in its `rows` collection: a store
    an older version wrote is read as it was (moved into the tailed collection on first use, the old one deleted),
    and Chroma's own search over it ranks as the exact scan does."""
    society = f"untailed {uuid.uuid4().hex[:8]}"
    events = [
        MemoryEvent(id="e1", text="Cyrene hid the olive branch.", cycle=1, round=1, tick=1, witnesses=["Cyrene"]),
        MemoryEvent(id="e2", text="Phainon swore an oath.", cycle=1, round=1, tick=1, witnesses=["Phainon", "Cyrene"]),
        MemoryEvent(id="e3", text="The tide rose.", cycle=1, round=2, tick=2, witnesses=[], public=True),
    ]
    fresh = Remembrance(InMemoryIndex(society), ["Cyrene", "Phainon"], embedder)
    fresh.remember(events)
    old = open_collection(chroma_client, internal_collection(society, "rows"), space="cosine")
    for agent in ["Cyrene", "Phainon"]:  # written as the layout before tails did: bare vectors, holder in metadata
        rows = rows_as_written_before(fresh, agent)
        old.upsert(
            ids=[holder_prefix(agent) + r for r in rows.ids],
            documents=rows.texts,
            metadatas=[{**m, HOLDER: agent} for m in rows.metadatas],
            embeddings=[list(v) for v in rows.vectors],
        )
    index = ChromaIndex(chroma_client, society)
    moved = Remembrance(index, ["Cyrene", "Phainon"], embedder)
    now = Moment(cycle=1, round=3, tick=3)
    query = {"Cyrene": "an oath", "Phainon": "an oath"}
    assert moved.recall(query, 5, now) == fresh.recall(query, 5, now)
    names = {c.name for c in chroma_client.list_collections()}
    assert internal_collection(society, "rows") not in names and internal_collection(society, ROWS) in names
    for agent in ["Cyrene", "Phainon"]:
        bare, kept = rows_as_written_before(fresh, agent), index.get(agent, vectors=True)
        assert sorted(kept.ids) == sorted(bare.ids)
        order = [kept.ids.index(r) for r in bare.ids]
        assert np.allclose(np.asarray(kept.vectors)[order], np.asarray(bare.vectors), atol=1e-6)
        probe = embedder.encode(["an oath sworn"])[0].tolist()
        assert [r for r, _ in index.query(agent, probe, 5)] == [r for r, _ in index.query(agent, probe, 5, exact=True)]
        got, want = index.query(agent, probe, 5), nearest(bare.ids, bare.vectors, probe, 5)
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5), "similarity as written"


def test_holder_tails_keep_each_holders_order_and_part_identical_rows():
    """A tailed cosine is a fixed increasing function of the bare one for the same holder, whatever the lengths;
    two holders' copies of one vector are different points."""
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((40, 8)) * rng.uniform(0.1, 5, (40, 1))
    query = rng.standard_normal(8) * 3
    for holder in ["Zoé", "Zoe\u0301", "agent 7"]:
        tailed = np.array([with_tail(v, holder) for v in rows])
        q = np.array(with_tail(query, holder))
        cos = tailed @ q / np.linalg.norm(tailed, axis=1) / np.linalg.norm(q)
        bare = rows @ query / np.linalg.norm(rows, axis=1) / np.linalg.norm(query)
        assert np.allclose(cos, (bare + TAIL_WEIGHT**2) / (1 + TAIL_WEIGHT**2))
        assert np.array_equal(without_tails(tailed), rows)
    assert not np.allclose(with_tail(rows[0], "Zoé"), with_tail(rows[0], "Zoe\u0301"))


def test_a_store_in_use_is_one_clear_error(tmp_path):
    _, lock = open_chroma(tmp_path)
    with pytest.raises(AmphoreusError, match="in use by another running simulation"):
        open_chroma(tmp_path)
    assert lock is not None
    lock.release()
    open_chroma(tmp_path)[1].release()  # type: ignore[union-attr]


def test_the_spec_names_one_store_and_the_factory_opens_it(tmp_path, embedder):
    with pytest.raises(ValidationError, match="not both"):
        MemorySpec(directory=tmp_path, url="http://127.0.0.1:8000")
    assert isinstance(open_index(MemorySpec(), "s"), InMemoryIndex)
    assert open_index(MemorySpec(), "s", shared=True) is open_index(MemorySpec(), "s", shared=True)
    memory = open_memory(MemorySpec(directory=tmp_path / "store"), "s", ["Cyrene"])
    assert isinstance(memory.index, ChromaIndex) and memory.embedder.encoder is embedder.encoder, (
        "the process's loaded model"
    )
    with pytest.raises(AmphoreusError, match="in use by another running simulation"):
        open_index(MemorySpec(directory=tmp_path / "store"), "s")
    memory.close()
    open_index(MemorySpec(directory=tmp_path / "store"), "s").close()  # the lock went with the memory
    with pytest.raises(AmphoreusError, match="expected http://HOST:PORT"):
        open_index(MemorySpec(url="not a url"), "s")


def test_a_locked_store_searches_each_agents_own_vectors_in_process_however_many(tmp_path, embedder, monkeypatch):
    """A run's own embedded store (locked) ranks the asking agent's held vectors here, never the society's
    collection through a filtered query, as rows come and go (retention deletes some); it answers as Chroma
    does for the same store opened without the lock, and another agent's private rows never come back."""
    from amphoreus_graph.contracts.memory import MemoryEvent, Moment
    from amphoreus_graph.contracts.memory_seam import Retention, RetentionMode

    client, lock = open_chroma(tmp_path / "chroma")
    index = ChromaIndex(client, "run", lock)
    memory = Remembrance(index, ["Aglaea", "Mydei"], embedder)
    texts = ["The loom sang at dawn.", "A storm broke over the sea.", "The gate of Okhema opened.", "Bread at noon."]
    events = [
        MemoryEvent(
            id=f"e{i}-{who}", text=f"{t} ({who}, {i})", witnesses=[who], cycle=1, round=i + 1, importance=i % 9 + 1
        )
        for i, t in enumerate(texts * 15)
        for who in ("Aglaea", "Mydei")
    ]
    memory.remember(events)
    memory.carry_over({"Aglaea": Retention(mode=RetentionMode.ECHOES, keep=20)}, next_cycle=2)
    memory.remember([MemoryEvent(id="e99", text="Thunder over the sea.", witnesses=["Aglaea"], cycle=2, round=1)])
    asked: list[str] = []
    monkeypatch.setattr(
        index, "query", lambda owner, *a, **k: asked.append(owner) or ChromaIndex.query(index, owner, *a, **k)
    )
    now = Moment(cycle=2, round=5, tick=70)
    here = memory.recall({"Aglaea": "a storm at sea"}, 8, now)["Aglaea"]
    assert asked == [], "a locked store never asks Chroma to search"
    assert here[0].text == "Thunder over the sea." and all("Mydei" not in m.text for m in here)
    assert len({m.id for m in here}) == 8
    fresh = Remembrance(ChromaIndex(client, "run"), ["Aglaea", "Mydei"], embedder)
    assert [m.id for m in fresh.recall({"Aglaea": "a storm at sea"}, 8, now)["Aglaea"]] == [m.id for m in here]
    lock.release()


def test_an_agents_search_finds_its_own_row_among_a_crowds_identical_public_copies(tmp_path):
    """Every agent's copy of a public text is the same point in the society's one HNSW graph: Chroma's search,
    filtered to one agent, must still find that agent's nearest row (before holder tails, with the 16 neighbours per
    node the store keeps, it missed 8-10% of them in this crowd)."""
    rng = np.random.default_rng(1)

    def unit(n: int) -> np.ndarray:
        v = rng.standard_normal((n, 16))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    client, lock = open_chroma(tmp_path / "crowd")
    index = ChromaIndex(client, "crowd")  # no lock: Chroma answers every search, as for a server
    public, own = unit(80), {a: unit(5) for a in range(80)}
    ids = [f"p{i}" for i in range(80)] + [f"h{i}" for i in range(5)]
    index.write(
        [
            RowChanges(f"agent {a}", written=Rows(ids, ids, [{}] * len(ids), [*public.tolist(), *own[a].tolist()]))
            for a in range(80)
        ]
    )
    misses = [
        (a, i)
        for a in range(80)
        for i in range(5)
        if index.query(f"agent {a}", (own[a][i] + 0.05 * unit(1)[0]).tolist(), 5)[0][0] != f"h{i}"
    ]
    assert misses == []
    assert lock is not None
    lock.release()


def test_dropping_a_store_of_the_old_layout_deletes_its_agents_collections(chroma_client):
    society = f"old drop {uuid.uuid4().hex[:8]}"
    old = open_collection(chroma_client, agent_collection(society, "Cyrene"), space="cosine")
    old.upsert(ids=["h1"], documents=["a text"], metadatas=[{"owner": "Cyrene"}], embeddings=[[1.0, 0.0, 0.0]])
    index = ChromaIndex(chroma_client, society)
    index.drop(["Cyrene"])
    assert agent_collection(society, "Cyrene") not in {c.name for c in chroma_client.list_collections()}
    assert index.get("Cyrene").ids == [] and ChromaIndex(chroma_client, society).get("Cyrene").ids == []


def seed_and_news(seed: str, news: str) -> list[MemoryEvent]:
    """A public seed (kept at a reset) and a public event of round 1 (news: gone at a reset)."""
    return [
        MemoryEvent(id="s", text=seed, cycle=1, round=0, tick=0, public=True, kind=MemoryKind.SEED),
        MemoryEvent(id="n", text=news, cycle=1, round=1, tick=1, public=True),
    ]


def test_a_public_record_is_one_row_for_the_whole_society(embedder):
    """A public event is filed once, in the society's public index, not once in every agent's: every agent recalls
    it, flagged public, and a reset's news goes with one row deleted, however many agents there are."""
    agents = [f"Villager {i}" for i in range(40)]
    memory = Remembrance(InMemoryIndex("fair"), agents, embedder)
    memory.remember(
        [
            *seed_and_news("The fair is held each spring.", "The stage stands ready."),
            MemoryEvent(id="p", text="Villager 3 baked bread.", cycle=1, round=1, tick=1, witnesses=["Villager 3"]),
        ]
    )
    assert all(memory.index.get(a).ids == [] for a in agents if a != "Villager 3")
    assert len(memory.index.get("Villager 3").ids) == 1 and len(memory.index.get(SHARED_HOLDER).ids) == 2
    found = memory.recall(dict.fromkeys(agents, "the stage"), 3, Moment(cycle=1, round=2, tick=2))
    assert all({(m.id, m.public) for m in found[a]} >= {("n@*", True), ("s@*", True)} for a in agents)
    assert memory.tally().records == 2 * len(agents) + 1, "each agent holds the public records, as it recalls them"
    memory.carry_over({}, next_cycle=2)
    assert [r.id for r in memory.public_records()] == ["s@*"] and len(memory.index.get(SHARED_HOLDER).ids) == 1


def test_an_agent_named_as_the_public_index_is_refused(embedder):
    with pytest.raises(AmphoreusError, match="public index"):
        Remembrance(InMemoryIndex("fair"), ["Aster", SHARED_HOLDER], embedder)


def test_a_store_whose_agents_hold_their_own_public_copies_resets_and_tallies_as_before(embedder):
    """A store written before the public index (each agent with its own copy of every public record) is read as it
    is: recalled, tallied and reset exactly as the same society filed today."""
    agents = ["Aster", "Bram", "*"]
    events = [
        *seed_and_news("Twelve Keepers hold the Lanterns.", "Bram delivered a Lantern."),
        MemoryEvent(id="a", text="Aster hid a Lantern.", cycle=1, round=1, tick=1, witnesses=["Aster", "*"]),
    ]
    today = Remembrance(InMemoryIndex("keepers"), agents, embedder)
    today.remember(events)
    before = InMemoryIndex("keepers")
    before.write([RowChanges(a, written=rows_as_written_before(today, a)) for a in agents])
    old = Remembrance(before, agents, embedder)
    now, query = Moment(cycle=1, round=2, tick=2), dict.fromkeys(agents, "a Lantern")
    assert old.recall(query, 5, now) == today.recall(query, 5, now) and old.tally() == today.tally()
    for memory in (today, old):
        memory.carry_over({}, next_cycle=2)
    assert old.dump() == today.dump() and old.tally() == today.tally()
    assert {a: len(before.get(a).ids) for a in agents} == {"Aster": 2, "Bram": 1, "*": 2}, "the news' copies went"
    assert old.recall(query, 5, now) == today.recall(query, 5, now)
