"""The memory conformance suite: what Remembrance must do over any RecordIndex backend.

A backend runs it by subclassing `MemoryConformance` in a test class (whose name starts with `Test`) with a
fixture `open_index`: a callable that gives the index of a society (by name) in one store, a new index object
over the same store on each call, so that "a new Remembrance over the same store" means what it says. The suite
brings its other fixture (`embedder`, the real default embedder); tests/test_memory_conformance.py runs it over
the packaged backends, and docs/memory.md ("Running the conformance suite") says how another package runs it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amphoreus_graph.catalogs.scenario import MemoryConfig, RecallMode, RecallWeights
from amphoreus_graph.contracts.ids import record_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.contracts.memory_seam import Retention, RetentionMode
from amphoreus_graph.memory.index import RecordIndex, RowChanges, Rows
from amphoreus_graph.memory.records import PUBLIC
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.models.embedder import Embedder, default_embedder
from amphoreus_graph.testing.privacy_cases import ADVERSARIAL_NAMES, Case, as_case, run_case, society_pair

OpenIndex = Callable[[str], RecordIndex]
# The properties run once per backend class (so from several executors), with the backend's function-scoped index.
BACKEND_CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.differing_executors]

AGENTS = ["Aster", "Bram", "Corin"]
RULES = {
    "Aster": Retention(mode=RetentionMode.ALL),
    "Bram": Retention(mode=RetentionMode.NONE),
    "Corin": Retention(mode=RetentionMode.ECHOES, keep=2, decay=0.5),
}
NOW = Moment(cycle=1, round=5, tick=5)
WORDS = ["olive", "tide", "flame", "sky", "sea", "oath", "blade", "song", "gate", "vortex", "law", "stars"]
LOOKALIKES = ["Zo\u00e9", "Zoe\u0301", "Zo\u00eb", "Zoe", "zoe", "Zoe ", " Zoe", "Zo e", "*", "PUBLIC", "王"]


def _event(i: int, text: str, witnesses: list[str], **kwargs: Any) -> MemoryEvent:
    return MemoryEvent(
        id=f"e{i}", text=text, cycle=kwargs.pop("cycle", 1), round=i, tick=i, witnesses=witnesses, **kwargs
    )


def _rows(n: int) -> tuple[list[str], list[str], list[dict[str, str]], list[list[float]]]:
    ids = [f"r{i}" for i in range(n)]
    vectors = [[1.0 if j == i else 0.0 for j in range(4)] for i in range(n)]
    return ids, [f"text {i}" for i in ids], [{"n": str(i)} for i in range(n)], vectors


def _written(owner: str, n: int) -> RowChanges:
    ids, texts, metadatas, vectors = _rows(3)
    return RowChanges(owner, written=Rows(ids[:n], texts[:n], metadatas[:n], vectors[:n]))


names_strategy = st.one_of(
    st.sampled_from(ADVERSARIAL_NAMES),
    st.text(st.characters(categories=("L", "M", "N", "P", "S", "Zs")), min_size=1, max_size=8),
)


@st.composite
def adversarial_cases(draw: st.DrawFn) -> Case:
    agents = draw(st.lists(names_strategy, min_size=2, max_size=6, unique=True))
    first, second = draw(st.lists(names_strategy, min_size=2, max_size=2, unique=True))
    events = draw(
        st.lists(
            st.tuples(
                st.integers(0, 1),
                st.lists(st.sampled_from([*WORDS, *agents]), min_size=1, max_size=5).map(" ".join),
                st.frozensets(st.sampled_from(agents)),
                st.booleans(),
            ),
            min_size=1,
            max_size=12,
        )
    )
    asking = draw(st.lists(st.sampled_from(agents), min_size=1, unique=True))
    queries = {h: " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))) for h in asking}
    return as_case(society_pair(first, second), agents, events, queries, draw(st.integers(1, 8)))


class MemoryConformance:
    """Every test takes the backend's `open_index` fixture; each test uses societies of its own."""

    @pytest.fixture
    def embedder(self) -> Embedder:
        """The real default embedder: loaded once per process (default_embedder keeps it), however many tests."""
        return default_embedder()

    @staticmethod
    def remembrance(
        open_index: OpenIndex, embedder: Embedder, society: str | None = None, **kwargs: Any
    ) -> Remembrance:
        return Remembrance(open_index(society or uuid.uuid4().hex[:12]), AGENTS, embedder, **kwargs)

    # The index itself

    def test_an_index_keeps_each_owners_rows_apart(self, open_index: OpenIndex) -> None:
        index = open_index(uuid.uuid4().hex[:12])
        ids, _, _, vectors = _rows(3)
        owners = ["Zoe", "zoe", "Zoe ", "*"]
        index.write([_written(owner, n) for n, owner in enumerate(owners, start=1)])  # one write, four owners
        for n, owner in enumerate(owners, start=1):
            assert sorted(index.get(owner).ids) == ids[:n]
            assert len(index.query(owner, vectors[0], 10)) == min(n, 3)
        assert index.get("nobody").ids == [] and index.query("nobody", vectors[0], 5) == []
        index.write([RowChanges("Zoe"), RowChanges("nobody", updated=Rows(["r1"], metadatas=[{"n": "x"}]))])
        index.write(
            [
                RowChanges("zoe", updated=Rows(["r1"], metadatas=[{"n": "changed"}])),
                RowChanges("Zoe ", deleted=["r0"]),
            ]
        )
        assert index.get("nobody").ids == [], "an update writes no row that does not exist"
        got = index.get("zoe")
        assert dict(zip(got.ids, got.metadatas, strict=True))["r1"] == {"n": "changed"}
        assert dict(zip(got.ids, got.texts, strict=True)) == {"r0": "text r0", "r1": "text r1"}
        assert sorted(index.get("Zoe ").ids) == ["r1", "r2"] and index.get("Zoe").ids == ["r0"]
        nearest = index.query("*", vectors[2], 2)
        assert nearest[0][0] == "r2" and nearest[0][1] == pytest.approx(1.0, abs=1e-5)
        assert index.query("*", vectors[2], 2, exact=True)[0] == ("r2", pytest.approx(1.0, abs=1e-9))

    def test_ticks_and_the_claim_sit_beside_the_rows(self, open_index: OpenIndex) -> None:
        society = uuid.uuid4().hex[:12]
        index = open_index(society)
        assert index.claim() is None and index.ticks(["a"]) == {}
        index.set_ticks(["a", "b"], 3)
        index.set_ticks(["b"], 7)
        index.forget_ticks(["a"])
        index.set_claim("run one")
        index.set_claim("run two")
        again = open_index(society)
        assert again.ticks(["a", "b", "c"]) == {"b": 7} and again.claim() == "run two"
        index.write([_written("Aster", 1)])
        again.drop(["Aster"])
        after = open_index(society)
        assert after.get("Aster").ids == [] and after.ticks(["b"]) == {}
        assert after.claim() == "run two", "dropping the memories keeps the claim"
        after.set_claim(None)
        assert open_index(society).claim() is None

    # Recall and privacy

    def test_only_witnesses_recall_an_event(self, open_index: OpenIndex, embedder: Embedder) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember([_event(1, "Aster hid the Lantern of Time under the olive tree.", ["Aster"])])
        found = memory.recall({h: "Where is the Lantern of Time hidden?" for h in AGENTS}, 5, NOW)
        assert [m.text for m in found["Aster"]] == ["Aster hid the Lantern of Time under the olive tree."]
        assert found["Bram"] == [] and found["Corin"] == []

    def test_events_not_yet_filed_are_recalled_as_if_filed_and_only_by_their_witnesses(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        """A round written behind: recall searches its events in process, ranked as filing them would rank them."""
        earlier = [_event(i, f"On day {i} the {WORDS[i]} was seen over Linden.", AGENTS) for i in range(1, 4)]
        pending = [
            _event(4, "Aster hid the Lantern of Time under the olive tree.", ["Aster"], importance=7),
            _event(5, "Bram swore an oath on the blade of Linden.", ["Bram", "Aster"]),
            _event(6, "The Dark Flood rose over the whole sky.", [], public=True),
        ]
        queries = {h: "Where is the Lantern hidden, and who swore an oath?" for h in [*AGENTS, "Stranger"]}
        waiting = self.remembrance(open_index, embedder)
        waiting.remember(earlier)
        before = waiting.recall(queries, 4, NOW, pending)
        assert waiting.recall(queries, 4, NOW) != before, "the pending events were searched"
        filed = self.remembrance(open_index, embedder)
        filed.remember(earlier)
        filed.remember(pending)
        after = filed.recall(queries, 4, NOW)
        strip = lambda found: {a: [(m.id, m.public, round(m.score, 4)) for m in ms] for a, ms in found.items()}  # noqa: E731
        assert strip(before) == strip(after)
        assert "e4@Aster" in [m.id for m in before["Aster"]]
        assert not any(m.id.startswith("e4@") for m in before["Bram"] + before["Corin"])
        assert before["Stranger"] == []
        waiting.remember(pending)
        assert strip(waiting.recall(queries, 4, NOW, pending)) == strip(after), "filed and pending: counted once"

    def test_look_alike_names_never_share_private_records(self, open_index: OpenIndex, embedder: Embedder) -> None:
        """Names equal but for accents, normal form, case or whitespace, and one equal to the public owner's: each
        recalls its own record and the public one, flagged as what they are, nothing else."""
        memory = Remembrance(open_index(uuid.uuid4().hex[:12]), LOOKALIKES, embedder)
        memory.remember(
            [_event(i, f"The olive oath of agent {i}.", [name]) for i, name in enumerate(LOOKALIKES)]
            + [_event(99, "The olive oath everyone heard.", [], public=True)]
        )
        found = memory.recall(dict.fromkeys(LOOKALIKES, "olive oath"), 10, NOW)
        for i, name in enumerate(LOOKALIKES):
            assert {(m.id, m.public) for m in found[name]} == {(record_id(f"e{i}", name), False), ("e99@*", True)}
        assert [r.id for r in memory.public_records()] == ["e99@*"]
        assert [r.id for r in memory.records("*")] == ["e8@%2A"], "an agent named like the public owner is an agent"

    @settings(max_examples=25, deadline=None, suppress_health_check=BACKEND_CHECKS)
    @given(
        raw_events=st.lists(
            st.tuples(
                st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
                st.sets(st.sampled_from(AGENTS)),
                st.booleans(),
            ),
            min_size=1,
            max_size=12,
        ),
        raw_queries=st.dictionaries(
            st.sampled_from(AGENTS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1
        ),
        k=st.integers(min_value=1, max_value=8),
    )
    def test_no_private_record_reaches_a_non_owner(
        self, open_index: OpenIndex, embedder: Embedder, raw_events: list, raw_queries: dict, k: int
    ) -> None:
        memory = self.remembrance(open_index, embedder)
        events = [
            MemoryEvent(id=f"e{i}", text=" ".join(w), cycle=1, round=i, tick=i, witnesses=sorted(who), public=public)
            for i, (w, who, public) in enumerate(raw_events)
        ]
        memory.remember(events)
        visible = {h: {e.id for e in events if e.public or h in e.witnesses} for h in AGENTS}
        found = memory.recall({h: " ".join(q) for h, q in raw_queries.items()}, k, Moment(cycle=1, round=20, tick=20))
        for agent, memories in found.items():
            for m in memories:
                event_id, _, owner = m.id.partition("@")
                assert owner == agent or (m.public and owner == PUBLIC), f"{agent} got {m.id}"
                assert event_id in visible[agent], f"{agent} recalled {event_id}, which it never witnessed"
            assert len(memories) == min(k, len(visible[agent]))

    @settings(max_examples=20, deadline=None, suppress_health_check=BACKEND_CHECKS)
    @given(case=adversarial_cases())
    def test_no_identity_can_reach_another_ones_private_records(
        self, open_index: OpenIndex, embedder: Embedder, case: Case
    ) -> None:
        """Two societies whose names may slug alike, agents whose names differ in accents, spaces, punctuation,
        script or normal form, or look reserved ("access", "public", "*", "PUBLIC"): no agent recalls anything but
        its own society's public records and its own, each flagged as what it is."""
        outcome = run_case(open_index, embedder, case)
        assert outcome.collisions == [] and outcome.leaks == []
        assert outcome.mislabelled == [] and outcome.missed == []

    # Ranking

    def test_ranked_recall_weighs_importance_recency_and_relevance(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember(
            [
                _event(1, "Corin read about the stars.", AGENTS, importance=2),
                _event(2, "Bram won the Lantern of Worldbearing.", AGENTS, importance=10),
                _event(3, "A feast of olives in Linden.", AGENTS, importance=3),
            ]
        )
        query = {"Aster": "astronomy and the night sky"}
        only = {
            "recency": RecallWeights(recency=1, importance=0, relevance=0),
            "relevance": RecallWeights(recency=0, importance=0, relevance=1),
            "importance": RecallWeights(recency=0, importance=1, relevance=0),
        }
        best = {part: _recall_with(memory, MemoryConfig(weights=w), query)[0].text for part, w in only.items()}
        assert best == {
            "relevance": "Corin read about the stars.",
            "importance": "Bram won the Lantern of Worldbearing.",
            "recency": "A feast of olives in Linden.",
        }
        cosine = _recall_with(memory, MemoryConfig(mode=RecallMode.COSINE), query)
        assert cosine[0].text == "Corin read about the stars." and cosine[0].score == cosine[0].relevance
        assert [m.score for m in cosine] == sorted((m.score for m in cosine), reverse=True)

    def test_recall_is_read_only_and_touch_marks_what_was_used(self, open_index: OpenIndex, embedder: Embedder) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember([_event(1, "The olive tree bloomed.", ["Aster"]), _event(2, "A storm broke.", ["Aster"])])
        (used,) = memory.recall({"Aster": "olive tree"}, 1, Moment(cycle=1, round=9, tick=9))["Aster"]
        assert {r.last_accessed for r in memory.records("Aster")} == {1, 2}, "recall alone is read-only"
        memory.touch({"Aster": [used.id]}, Moment(cycle=1, round=9, tick=9))
        accessed = {r.text: r.last_accessed for r in memory.records("Aster")}
        assert accessed == {"The olive tree bloomed.": 9, "A storm broke.": 2}

    def test_a_heir_finds_its_one_distinct_record_among_hundreds_sharing_a_text(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        """Routine events repeat their text round after round; many identical vectors degrade an HNSW index until
        a search misses the exact match and returns fewer rows than asked. Each text is one row here."""
        memory = self.remembrance(open_index, embedder)
        routine = "Aster rested by the fire in Linden."
        distinct = "Aster buried the Lantern of Time under the third olive tree."
        events = [_event(i, routine, ["Aster", "Bram"], importance=9) for i in range(300)]
        memory.remember([*events[:150], _event(999, distinct, ["Aster"], importance=1), *events[150:]])
        now = Moment(cycle=1, round=400, tick=400)
        for config in (MemoryConfig(mode=RecallMode.COSINE), MemoryConfig()):
            memory.config = config
            found = memory.recall({"Aster": distinct}, 1, now)["Aster"]
            assert [m.text for m in found] == [distinct]
            assert found[0].relevance == pytest.approx(1.0, abs=1e-5)
        everything = memory.recall({"Aster": distinct, "Bram": distinct}, 1000, now)
        assert len(everything["Aster"]) == 301 and len({m.id for m in everything["Aster"]}) == 301
        assert len(everything["Bram"]) == 300
        assert [m.text for m in everything["Aster"]].count(distinct) == 1
        assert memory.recall({"Aster": routine}, 200, now)["Aster"][0].text == routine
        assert len(memory.records("Aster")) == 301, "records sharing a text stay apart"

    # Reflection

    def test_reflection_cites_existing_evidence_and_is_remembered(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        memory = self.remembrance(open_index, embedder, paths={"Aster": "Remembrance"})
        memory.remember(
            [_event(i, f"Aster watched Bram fight the Tide, day {i}.", ["Aster"], importance=5 + i) for i in range(4)]
        )
        (reflection,) = memory.reflect(["Aster"], NOW)
        memory.remember([reflection])
        records = {r.id: r for r in memory.records("Aster")}
        assert reflection.kind is MemoryKind.REFLECTION and reflection.evidence
        assert set(reflection.evidence) <= set(records), "a reflection cites records that exist"
        stored = records[f"{reflection.id}@Aster"]
        assert stored.evidence == reflection.evidence and "Remembrance" in stored.text and "Bram" in stored.text

    # Retention

    def test_a_fact_outlives_resets_only_for_remembrance(self, open_index: OpenIndex, embedder: Embedder) -> None:
        """Witnessed by Aster (keeps all) and Bram (keeps nothing) in cycle 1; asked in cycle 3."""
        memory = self.remembrance(open_index, embedder)
        fact = "The key to the Vault is hidden beneath the third pillar of the Marble Hall."
        memory.remember([_event(1, fact, ["Aster", "Bram"], importance=4)])
        memory.remember([_event(i, f"Ordinary day number {i} in Linden.", AGENTS, importance=6) for i in range(2, 8)])
        memory.carry_over(RULES, next_cycle=2)
        memory.remember([_event(9, "A feast in cycle two.", AGENTS, cycle=2)])
        memory.carry_over(RULES, next_cycle=3)
        found = memory.recall(
            {h: "Where is the key to the Vault hidden?" for h in AGENTS}, 3, Moment(cycle=3, round=1, tick=25)
        )
        assert fact in [m.text for m in found["Aster"]]
        assert found["Aster"][0].cycle == 1
        assert found["Bram"] == []
        assert fact not in [m.text for m in found["Corin"]]

    def test_public_records_are_for_everyone_and_only_seeds_survive_a_reset(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember(
            [
                _event(1, "Twelve Keepers hold the Lanterns.", [], public=True, kind=MemoryKind.SEED),
                _event(2, "Bram delivered the Lantern of Worldbearing.", [], public=True),
            ]
        )
        found = memory.recall({h: "Lanterns" for h in AGENTS}, 5, NOW)
        assert all(len(found[h]) == 2 and all(m.public for m in found[h]) for h in AGENTS)
        memory.carry_over(RULES, next_cycle=2)
        assert [r.text for r in memory.records(PUBLIC)] == ["Twelve Keepers hold the Lanterns."]

    def test_retention_keeps_all_echoes_or_nothing_with_decay(self, open_index: OpenIndex, embedder: Embedder) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember([_event(i, f"Event number {i}", AGENTS, importance=1 + i) for i in range(6)])
        assert memory.carry_over(RULES, next_cycle=2) == {"Aster": 6, "Bram": 0, "Corin": 2}
        snapshot = memory.dump()
        assert len(snapshot["agents"]["Aster"]) == 6 and snapshot["agents"]["Bram"] == []
        assert {r["text"]: r["importance"] for r in snapshot["agents"]["Corin"]} == {
            "Event number 5": 3.0,
            "Event number 4": 2.5,
        }

    def test_records_sharing_a_text_stay_apart_through_retention_and_reread(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        """A row holds every record of its text: retention drops some of them, decays others, and a fresh reader
        sees exactly the records that remain."""
        memory = self.remembrance(open_index, embedder)
        memory.remember([_event(i, "The Tide rose again.", AGENTS, importance=1 + i) for i in range(6)])
        memory.carry_over(RULES, next_cycle=2)
        kept = {r.id: r.importance for r in memory.records("Corin")}
        assert kept == {"e5@Corin": 3.0, "e4@Corin": 2.5}
        assert memory.records("Bram") == [] and len(memory.records("Aster")) == 6
        again = self.remembrance(open_index, embedder, memory.society)
        assert again.dump() == memory.dump()
        assert [m.id for m in again.recall({"Corin": "The Tide rose again."}, 9, NOW)["Corin"]] == [
            "e5@Corin",
            "e4@Corin",
        ]

    # Exactly once, and what the store holds

    def test_remember_twice_files_once_and_reports_importance_gained(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        memory = self.remembrance(open_index, embedder)
        event = _event(1, "Bram swore an oath.", ["Bram", "Aster"], importance=4)
        assert memory.remember([event]) == {"Bram": 4.0, "Aster": 4.0}
        memory.remember([event])
        dump = memory.dump()
        assert [len(v) for v in dump["agents"].values()] == [1, 1, 0] and dump["public"] == []

    def test_a_replay_after_a_crash_changes_nothing(self, open_index: OpenIndex, embedder: Embedder) -> None:
        """A round's writes and a cycle end, done again by a new Remembrance over the same store (a restarted
        process replaying from its checkpoint), leave exactly what the first pass left."""
        first = self.remembrance(open_index, embedder)
        seeds = [_event(0, "Twelve Keepers hold the Lanterns.", [], public=True, kind=MemoryKind.SEED)]
        rounds = [
            [_event(i, f"Round {i}: Bram and Aster met at the gate.", AGENTS, importance=2 + i) for i in (1, 2)],
            [_event(3, "News of the Tide spread.", [], public=True)],
        ]
        used = {"Aster": ["e1@Aster"], "Corin": ["e2@Corin"], "Bram": ["e3@*"]}
        now = Moment(cycle=1, round=4, tick=4)

        def live(memory: Remembrance) -> None:
            memory.remember(seeds)
            for events in rounds:
                memory.remember(events)
            memory.touch(used, now)
            memory.carry_over(RULES, next_cycle=2)

        live(first)
        snapshot = first.dump()
        query = {h: "the gate and the Tide" for h in AGENTS}
        recalled = first.recall(query, 4, Moment(cycle=2, round=1, tick=9))
        replay = self.remembrance(open_index, embedder, first.society)
        live(replay)
        assert replay.dump() == snapshot
        assert self.remembrance(open_index, embedder, first.society).dump() == snapshot
        assert replay.recall(query, 4, Moment(cycle=2, round=1, tick=9)) == recalled
        live(first)
        assert first.dump() == snapshot

    def test_what_is_held_in_process_is_what_the_store_holds_after_every_write(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        """Recall, reflection and retention read the records held in process; a fresh reader sees the store."""
        memory = self.remembrance(open_index, embedder, paths={"Aster": "Remembrance"})

        def same_as_store() -> None:
            assert memory.dump() == self.remembrance(open_index, embedder, memory.society).dump()
            query = {h: "the Lantern and the storm" for h in AGENTS}
            fresh = self.remembrance(open_index, embedder, memory.society)
            assert memory.recall(query, 4, NOW) == fresh.recall(query, 4, NOW)

        memory.recall({"Aster": "anything"}, 3, NOW)  # read (empty) before anything is written
        memory.remember(
            [_event(i, f"Aster saw storm {i} near the Lantern.", AGENTS, importance=2 + i) for i in range(5)]
        )
        memory.remember([_event(9, "The Lantern of Sky is public knowledge.", [], public=True, kind=MemoryKind.SEED)])
        same_as_store()
        memory.touch({h: [f"e3@{h}"] for h in AGENTS}, Moment(cycle=1, round=8, tick=8))
        same_as_store()
        memory.remember([_event(3, "Aster saw storm 3 near the Lantern.", AGENTS, importance=5)])  # filed again
        assert {r.id: r.last_accessed for r in memory.records("Aster")}["e3@Aster"] == 8
        same_as_store()
        memory.remember(memory.reflect(["Aster"], NOW))
        same_as_store()
        memory.carry_over(RULES, next_cycle=2)
        same_as_store()

    def test_records_written_by_another_remembrance_are_read_again(
        self, open_index: OpenIndex, embedder: Embedder
    ) -> None:
        reader = self.remembrance(open_index, embedder)
        assert reader.recall({"Aster": "olive tree"}, 3, NOW)["Aster"] == []  # Aster's records now held: none
        writer = self.remembrance(open_index, embedder, reader.society)
        writer.remember([_event(1, "The olive tree bloomed.", ["Aster"])])
        found = reader.recall({"Aster": "olive tree"}, 3, NOW)["Aster"]
        assert [m.text for m in found] == ["The olive tree bloomed."]

    def test_drop_forgets_the_society_and_goes_on_empty(self, open_index: OpenIndex, embedder: Embedder) -> None:
        memory = self.remembrance(open_index, embedder)
        memory.remember([_event(1, "The olive tree bloomed.", AGENTS), _event(2, "News.", [], public=True)])
        memory.touch({"Aster": ["e1@Aster"]}, NOW)
        memory.drop()
        assert memory.dump() == {"agents": {h: [] for h in AGENTS}, "public": []}
        assert self.remembrance(open_index, embedder, memory.society).dump() == memory.dump()
        memory.remember([_event(1, "The olive tree bloomed.", AGENTS)])
        assert {r.last_accessed for r in memory.records("Aster")} == {1}, "no tick outlives a drop"


def _recall_with(memory: Remembrance, config: MemoryConfig, query: dict[str, str]) -> list:
    memory.config = config
    return memory.recall(query, 3, NOW)["Aster"]
