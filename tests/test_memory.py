"""Remembrance on real Chroma (embedded and a `chroma run` server) with the real embedder."""

from __future__ import annotations

import uuid

import pytest

from amphoreus_graph.catalogs.scenario import MemoryConfig, RecallMode, RecallWeights, Retention, RetentionMode
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.naming import legacy_collection_name
from amphoreus_graph.memory.records import PUBLIC
from amphoreus_graph.memory.store import ChromaMemory, describe_store, open_chroma

HEIRS = ["Cyrene", "Phainon", "Anaxagoras"]
RULES = {
    "Cyrene": Retention(mode=RetentionMode.ALL),
    "Phainon": Retention(mode=RetentionMode.NONE),
    "Anaxagoras": Retention(mode=RetentionMode.ECHOES, keep=2, decay=0.5),
}
NOW = Moment(cycle=1, round=5, tick=5)


def _memory(client, embedder, **kwargs) -> ChromaMemory:
    """A fresh society per test: clients are shared within a process, so each test names its own."""
    return ChromaMemory(client, uuid.uuid4().hex[:12], HEIRS, embedder, **kwargs)


def _event(i: int, text: str, witnesses: list[str], **kwargs) -> MemoryEvent:
    return MemoryEvent(
        id=f"e{i}", text=text, cycle=kwargs.pop("cycle", 1), round=i, tick=i, witnesses=witnesses, **kwargs
    )


def test_only_witnesses_recall_an_event(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    memory.remember([_event(1, "Cyrene hid the Coreflame of Time under the olive tree.", ["Cyrene"])])
    found = memory.recall({h: "Where is the Coreflame of Time hidden?" for h in HEIRS}, 5, NOW)
    assert [m.text for m in found["Cyrene"]] == ["Cyrene hid the Coreflame of Time under the olive tree."]
    assert found["Phainon"] == [] and found["Anaxagoras"] == []


def test_a_fact_outlives_resets_only_for_remembrance(chroma_client, embedder):
    """Witnessed by Cyrene (Remembrance) and Phainon (keeps nothing) in cycle 1; asked in cycle 3."""
    memory = _memory(chroma_client, embedder)
    fact = "The key to the Vortex is hidden beneath the third pillar of the Marmoreal Palace."
    memory.remember([_event(1, fact, ["Cyrene", "Phainon"], importance=4)])
    memory.remember([_event(i, f"Ordinary day number {i} in Okhema.", HEIRS, importance=6) for i in range(2, 8)])
    memory.carry_over(RULES, next_cycle=2)
    memory.remember([_event(9, "A feast in cycle two.", HEIRS, cycle=2)])
    memory.carry_over(RULES, next_cycle=3)
    found = memory.recall(
        {h: "Where is the key to the Vortex hidden?" for h in HEIRS}, 3, Moment(cycle=3, round=1, tick=25)
    )
    assert fact in [m.text for m in found["Cyrene"]]
    assert found["Cyrene"][0].cycle == 1
    assert found["Phainon"] == []
    assert fact not in [m.text for m in found["Anaxagoras"]]


def test_ranked_recall_weighs_importance_recency_and_relevance(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    memory.remember(
        [
            _event(1, "Anaxagoras read about the stars.", HEIRS, importance=2),
            _event(2, "Phainon won the Coreflame of Worldbearing.", HEIRS, importance=10),
            _event(3, "A feast of olives in Okhema.", HEIRS, importance=3),
        ]
    )
    query = {"Cyrene": "astronomy and the night sky"}
    only = {  # recency first: every recall refreshes what it returned
        "recency": RecallWeights(recency=1, importance=0, relevance=0),
        "relevance": RecallWeights(recency=0, importance=0, relevance=1),
        "importance": RecallWeights(recency=0, importance=1, relevance=0),
    }
    best = {part: _recall_with(memory, MemoryConfig(weights=w), query)[0].text for part, w in only.items()}
    assert best == {
        "relevance": "Anaxagoras read about the stars.",
        "importance": "Phainon won the Coreflame of Worldbearing.",
        "recency": "A feast of olives in Okhema.",
    }
    cosine = _recall_with(memory, MemoryConfig(mode=RecallMode.COSINE), query)
    assert cosine[0].text == "Anaxagoras read about the stars." and cosine[0].score == cosine[0].relevance
    assert [m.score for m in cosine] == sorted((m.score for m in cosine), reverse=True)


def _recall_with(memory: ChromaMemory, config: MemoryConfig, query: dict[str, str]):
    memory.config = config
    return memory.recall(query, 3, NOW)["Cyrene"]


def test_recall_marks_what_it_returned_as_accessed(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    memory.remember([_event(1, "The olive tree bloomed.", ["Cyrene"]), _event(2, "A storm broke.", ["Cyrene"])])
    (used,) = memory.recall({"Cyrene": "olive tree"}, 1, Moment(cycle=1, round=9, tick=9))["Cyrene"]
    assert {r.last_accessed for r in memory.records("Cyrene")} == {1, 2}, "recall alone is read-only"
    memory.touch([used.id], Moment(cycle=1, round=9, tick=9))
    accessed = {r.text: r.last_accessed for r in memory.records("Cyrene")}
    assert accessed == {"The olive tree bloomed.": 9, "A storm broke.": 2}


def test_public_records_are_for_everyone_and_only_seeds_survive_a_reset(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    memory.remember(
        [
            _event(1, "Twelve Titans hold the Coreflames.", [], public=True, kind=MemoryKind.SEED),
            _event(2, "Phainon delivered the Coreflame of Worldbearing.", [], public=True),
        ]
    )
    found = memory.recall({h: "Coreflames" for h in HEIRS}, 5, NOW)
    assert all(len(found[h]) == 2 and all(m.public for m in found[h]) for h in HEIRS)
    memory.carry_over(RULES, next_cycle=2)
    assert [r.text for r in memory.records(PUBLIC)] == ["Twelve Titans hold the Coreflames."]


def test_retention_keeps_all_echoes_or_nothing_and_is_idempotent(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    memory.remember([_event(i, f"Event number {i}", HEIRS, importance=1 + i) for i in range(6)])
    assert memory.carry_over(RULES, next_cycle=2) == {"Cyrene": 6, "Phainon": 0, "Anaxagoras": 2}
    snapshot = memory.dump()
    assert len(snapshot["agents"]["Cyrene"]) == 6 and snapshot["agents"]["Phainon"] == []
    assert {r["text"]: r["importance"] for r in snapshot["agents"]["Anaxagoras"]} == {
        "Event number 5": 3.0,
        "Event number 4": 2.5,
    }
    memory.carry_over(RULES, next_cycle=2)  # a replayed cycle end changes nothing
    assert memory.dump() == snapshot


def test_remember_twice_files_once_and_reports_importance_gained(chroma_client, embedder):
    memory = _memory(chroma_client, embedder)
    event = _event(1, "Phainon swore an oath.", ["Phainon", "Cyrene"], importance=4)
    assert memory.remember([event]) == {"Phainon": 4.0, "Cyrene": 4.0}
    memory.remember([event])
    dump = memory.dump()
    assert [len(v) for v in dump["agents"].values()] == [1, 1, 0] and dump["public"] == []


def test_reflection_cites_existing_evidence(chroma_client, embedder):
    memory = _memory(chroma_client, embedder, paths={"Cyrene": "Remembrance"})
    memory.remember(
        [_event(i, f"Cyrene watched Phainon fight the Tide, day {i}.", ["Cyrene"], importance=5 + i) for i in range(4)]
    )
    (reflection,) = memory.reflect(["Cyrene"], NOW)
    records = {r.id: r for r in memory.records("Cyrene")}
    assert reflection.kind is MemoryKind.REFLECTION and reflection.evidence
    assert set(reflection.evidence) <= set(records), "a reflection cites records that exist"
    stored = records[f"{reflection.id}@Cyrene"]
    assert stored.evidence == reflection.evidence and "Remembrance" in stored.text and "Phainon" in stored.text


def test_the_records_held_in_process_are_what_chroma_holds_after_every_write(chroma_client, embedder):
    """Recall, reflection and retention read the records held in process; a fresh reader sees Chroma itself."""
    memory = _memory(chroma_client, embedder, paths={"Cyrene": "Remembrance"})

    def fresh() -> ChromaMemory:
        return ChromaMemory(chroma_client, memory.society, HEIRS, embedder)

    def same_as_chroma() -> None:
        assert memory.dump() == fresh().dump()
        query = {h: "the Coreflame and the storm" for h in HEIRS}
        assert memory.recall(query, 4, NOW) == fresh().recall(query, 4, NOW)

    memory.recall({"Cyrene": "anything"}, 3, NOW)  # read (empty) before anything is written
    memory.remember([_event(i, f"Cyrene saw storm {i} near the Coreflame.", HEIRS, importance=2 + i) for i in range(5)])
    memory.remember([_event(9, "The Coreflame of Sky is public knowledge.", [], public=True, kind=MemoryKind.SEED)])
    same_as_chroma()
    memory.touch([f"e3@{h}" for h in HEIRS], Moment(cycle=1, round=8, tick=8))
    same_as_chroma()
    memory.remember([_event(3, "Cyrene saw storm 3 near the Coreflame.", HEIRS, importance=5)])  # filed again
    assert {r.id: r.last_accessed for r in memory.records("Cyrene")}["e3@Cyrene"] == 8
    same_as_chroma()
    memory.reflect(["Cyrene"], NOW)
    same_as_chroma()
    memory.carry_over(RULES, next_cycle=2)
    same_as_chroma()


def test_records_written_by_another_client_are_read_again(chroma_client, embedder):
    reader = _memory(chroma_client, embedder)
    assert reader.recall({"Cyrene": "olive tree"}, 3, NOW)["Cyrene"] == []  # Cyrene's records now held: none
    writer = ChromaMemory(chroma_client, reader.society, HEIRS, embedder)
    writer.remember([_event(1, "The olive tree bloomed.", ["Cyrene"])])
    assert [m.text for m in reader.recall({"Cyrene": "olive tree"}, 3, NOW)["Cyrene"]] == ["The olive tree bloomed."]


@pytest.mark.parametrize("legacy", ["access", "public"])
def test_a_store_written_with_the_older_names_is_refused_untouched(chroma_client, embedder, legacy):
    """Older versions slugged names into `m-<society>--<heir>` (and always made `--access`; the oldest kept public
    records in `--public`): under today's names such a store would look empty, so opening it is one clear error."""
    society = f"old run {uuid.uuid4().hex[:8]}"
    chroma_client.create_collection(legacy_collection_name(society, legacy), embedding_function=None)
    before = sorted(c.name for c in chroma_client.list_collections())
    with pytest.raises(AmphoreusError) as error:
        ChromaMemory(chroma_client, society, HEIRS, embedder)
    message = str(error.value)
    assert "\n" not in message and repr(society) in message and "older amphoreus-graph" in message
    assert "fresh --memory-dir" in message and describe_store(chroma_client) in message
    assert sorted(c.name for c in chroma_client.list_collections()) == before, "nothing is created or changed"


def test_a_heir_finds_its_one_distinct_record_among_hundreds_sharing_a_text(chroma_client, embedder):
    """Routine events repeat their text round after round; many identical vectors degrade Chroma's HNSW index
    until a search misses the exact match and returns fewer rows than asked. Each text is one row here."""
    memory = _memory(chroma_client, embedder)
    routine = "Cyrene rested by the fire in Okhema."
    distinct = "Cyrene buried the Coreflame of Time under the third olive tree."
    events = [_event(i, routine, ["Cyrene", "Phainon"], importance=9) for i in range(300)]
    memory.remember([*events[:150], _event(999, distinct, ["Cyrene"], importance=1), *events[150:]])
    now = Moment(cycle=1, round=400, tick=400)
    for config in (MemoryConfig(mode=RecallMode.COSINE), MemoryConfig()):
        memory.config = config
        found = memory.recall({"Cyrene": distinct}, 1, now)["Cyrene"]
        assert [m.text for m in found] == [distinct]
        assert found[0].relevance == pytest.approx(1.0, abs=1e-5)
    everything = memory.recall({"Cyrene": distinct, "Phainon": distinct}, 1000, now)
    assert len(everything["Cyrene"]) == 301 and len({m.id for m in everything["Cyrene"]}) == 301
    assert len(everything["Phainon"]) == 300
    assert [m.text for m in everything["Cyrene"]].count(distinct) == 1
    assert memory.recall({"Cyrene": routine}, 200, now)["Cyrene"][0].text == routine
    assert len(memory.records("Cyrene")) == 301, "records sharing a text stay apart"


def test_records_sharing_a_text_stay_apart_through_retention_and_reread(chroma_client, embedder):
    """A row holds every record of its text: retention drops some of them, decays others, and a fresh reader
    sees exactly the records that remain."""
    memory = _memory(chroma_client, embedder)
    memory.remember([_event(i, "The Tide rose again.", HEIRS, importance=1 + i) for i in range(6)])
    memory.carry_over(RULES, next_cycle=2)
    kept = {r.id: r.importance for r in memory.records("Anaxagoras")}
    assert kept == {"e5@Anaxagoras": 3.0, "e4@Anaxagoras": 2.5}
    assert memory.records("Phainon") == [] and len(memory.records("Cyrene")) == 6
    again = ChromaMemory(chroma_client, memory.society, HEIRS, embedder)
    assert again.dump() == memory.dump()
    assert [m.id for m in again.recall({"Anaxagoras": "The Tide rose again."}, 9, NOW)["Anaxagoras"]] == [
        "e5@Anaxagoras",
        "e4@Anaxagoras",
    ]


def test_a_store_in_use_is_one_clear_error(tmp_path):
    _, lock = open_chroma(tmp_path)
    with pytest.raises(AmphoreusError, match="in use by another running simulation"):
        open_chroma(tmp_path)
    assert lock is not None
    lock.release()
    open_chroma(tmp_path)[1].release()  # type: ignore[union-attr]
