"""What is particular to the shipped backends and the factory; what any backend must do is in the conformance
suite (tests/memory_conformance.py, run by tests/test_memory_conformance.py)."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.chroma_index import SYNC_THRESHOLD, ChromaIndex, open_chroma
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.naming import agent_collection, internal_collection
from amphoreus_graph.memory.store import MemorySpec, open_index, open_memory


def test_every_collection_syncs_its_index_every_few_writes_made_before_or_now(chroma_client):
    """Chroma's default (a sync every 1000 writes) makes each write slower as a society's store fills; collections
    this index makes, and ones an older run made with the default, sync every SYNC_THRESHOLD writes."""
    society = f"sync {uuid.uuid4().hex[:8]}"
    chroma_client.create_collection(agent_collection(society, "Old"), embedding_function=None)  # Chroma's default
    index = ChromaIndex(chroma_client, society)
    index.upsert("Old", ["a"], ["text"], [{"k": "v"}], [[1.0, 0.0, 0.0]])
    index.upsert("New", ["a"], ["text"], [{"k": "v"}], [[1.0, 0.0, 0.0]])
    index.set_ticks(["Old:a"], 3)
    names = [agent_collection(society, "Old"), agent_collection(society, "New"), internal_collection(society, "access")]
    for name in names:
        reopened = chroma_client.get_collection(name, embedding_function=None)
        assert reopened.configuration["hnsw"]["sync_threshold"] == SYNC_THRESHOLD, name
    space = chroma_client.get_collection(agent_collection(society, "New"), embedding_function=None)
    assert space.configuration["hnsw"]["space"] == "cosine"


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
    assert isinstance(memory.index, ChromaIndex) and memory.embedder is embedder
    with pytest.raises(AmphoreusError, match="in use by another running simulation"):
        open_index(MemorySpec(directory=tmp_path / "store"), "s")
    memory.close()
    open_index(MemorySpec(directory=tmp_path / "store"), "s").close()  # the lock went with the memory
    with pytest.raises(AmphoreusError, match="expected http://HOST:PORT"):
        open_index(MemorySpec(url="not a url"), "s")


def test_a_locked_store_is_searched_in_process_until_an_agent_outgrows_it(tmp_path, embedder, monkeypatch):
    """A run's own embedded store (locked) ranks an agent's held vectors here, no index query; an agent with more
    rows than SEARCHED_HERE is asked of the index again, and both give the same memories."""
    from amphoreus_graph.contracts.memory import MemoryEvent, Moment
    from amphoreus_graph.memory import text_rows
    from amphoreus_graph.memory.remembrance import Remembrance

    client, lock = open_chroma(tmp_path / "chroma")
    index = ChromaIndex(client, "run", lock)
    memory = Remembrance(index, ["Aglaea"], embedder)
    texts = ["The loom sang at dawn.", "A storm broke over the sea.", "The gate of Okhema opened."]
    memory.remember(
        [MemoryEvent(id=f"e{i}", text=t, witnesses=["Aglaea"], cycle=1, round=i + 1) for i, t in enumerate(texts)]
    )
    now = Moment(cycle=1, round=5, tick=5)
    asked: list[str] = []
    monkeypatch.setattr(
        index, "query", lambda owner, *a, **k: asked.append(owner) or ChromaIndex.query(index, owner, *a, **k)
    )
    here = memory.recall({"Aglaea": "a storm at sea"}, 2, now)
    assert asked == [] and here["Aglaea"][0].text == "A storm broke over the sea."
    monkeypatch.setattr(text_rows, "SEARCHED_HERE", 2)
    memory.remember([MemoryEvent(id="e9", text="Thunder over the sea.", witnesses=["Aglaea"], cycle=1, round=4)])
    outgrown = memory.recall({"Aglaea": "a storm at sea"}, 2, now)
    assert asked == ["Aglaea"], "more rows than SEARCHED_HERE: the index answers"
    fresh = Remembrance(ChromaIndex(client, "run"), ["Aglaea"], embedder).recall({"Aglaea": "a storm at sea"}, 2, now)
    assert [m.id for m in outgrown["Aglaea"]] == [m.id for m in fresh["Aglaea"]]
    lock.release()
