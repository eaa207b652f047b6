"""While the model thinks, the next round's likely recall queries are embedded ahead: a head start that must never
change what a run does."""

from __future__ import annotations

from pathlib import Path

from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.society.runner import RunConfig, Simulation

TRIO = Path(__file__).resolve().parents[1] / "amphoreus_graph" / "worlds" / "amphoreus" / "trio.yaml"


def test_anticipated_queries_wait_in_the_cache_and_a_failure_costs_nothing(embedder):
    own = embedder.view()
    memory = Remembrance(InMemoryIndex("ahead"), ["Aglaea"], own)
    assert own.batch_independent, "the shipped embedder runs int8, one text at a time"
    started = memory.anticipate(lambda: ["Aglaea seeks the loom at Okhema."])
    assert started is not None
    started.result(timeout=30)
    assert "Aglaea seeks the loom at Okhema." in own._cache

    def broken() -> list[str]:
        raise ValueError("a round that will never be played")

    failed = memory.anticipate(broken)
    assert failed is not None and failed.result(timeout=30) is None, "the failure stays in the background"


def test_nothing_is_anticipated_where_a_vector_depends_on_its_batch_mates(embedder):
    own = embedder.view()
    own.batch_independent = False  # fp32 and PyTorch embed in batches: a head start could change a vector's bits
    memory = Remembrance(InMemoryIndex("ahead"), ["Aglaea"], own)
    assert memory.anticipate(lambda: ["anything"]) is None and "anything" not in own._cache


async def test_a_run_is_the_same_with_and_without_the_head_start(tmp_path, monkeypatch):
    """Samples (with what each turn recalled, scores and all) and chronicle, byte for byte."""

    async def run(folder: str) -> Path:
        config = RunConfig(scenario=str(TRIO), cycles=2, seed=5, out=tmp_path / folder / "run")  # same run id
        await Simulation(config).run()
        return tmp_path / folder / "run"

    served: list[bool] = []  # per recall: answered from a recall ranked ahead
    original = Remembrance.recall

    def noted(self: Remembrance, queries, k, now, pending=()):  # type: ignore[no-untyped-def]
        if self._ahead is not None:
            self._ahead.result(timeout=60)
        ranked = self._ranked_ahead
        found = original(self, queries, k, now, pending)
        served.append(ranked is not None and all(found[a] is ranked[2][a] for a in found))
        return found

    monkeypatch.setattr(Remembrance, "recall", noted)
    ahead = await run("ahead")
    assert served.count(True) >= len(served) - 2, f"every recall after a round was ranked ahead: {served}"
    monkeypatch.setattr(Remembrance, "anticipate", lambda self, texts: None)
    monkeypatch.setattr(Remembrance, "anticipate_recall", lambda self, request: None)
    served.clear()
    plain = await run("plain")
    assert not any(served)
    for folder in ("samples", "chronicle"):
        for shard in sorted((plain / folder).glob("*.jsonl")):
            assert (ahead / folder / shard.name).read_bytes() == shard.read_bytes(), f"{folder}/{shard.name}"
    assert (ahead / "summary.json").exists() and (plain / "summary.json").exists()


async def test_a_resolved_round_has_the_next_rounds_queries_embedded_before_the_director_asks(tmp_path, monkeypatch):
    """The game master knows the world the next round opens from: every query of a round after the first is in the
    embedder's cache when recall starts (the director's guess during the turns leaves some out)."""
    cached: list[tuple[int, int, int]] = []  # (round, queries cached, queries)
    original = Remembrance.recall

    def noted(self: Remembrance, queries, k, now, pending=()):  # type: ignore[no-untyped-def]
        if self._ahead is not None:
            self._ahead.result(timeout=60)  # the head start, finished as the recall's own embedding would wait
        texts = set(queries.values())
        cached.append((now.round, len(texts & set(self.embedder._cache)), len(texts)))
        return original(self, queries, k, now, pending)

    monkeypatch.setattr(Remembrance, "recall", noted)
    await Simulation(RunConfig(scenario=str(TRIO), cycles=1, rounds=6, seed=3, out=tmp_path / "run")).run()
    later = [(hit, total) for round_, hit, total in cached if round_ > 1]
    assert len(later) == 5 and all(hit == total > 0 for hit, total in later), cached


def test_a_recall_ranked_ahead_answers_only_the_same_request_over_what_is_still_held(embedder):
    from amphoreus_graph.contracts.memory import MemoryEvent, Moment
    from amphoreus_graph.contracts.memory_seam import RecallRequest

    class Alone(InMemoryIndex):  # as a locked embedded store is: nothing else writes it
        exclusive = True  # type: ignore[assignment]

    memory = Remembrance(Alone("ahead"), ["Aglaea", "Mydeimos"], embedder.view())
    first = Moment(cycle=1, round=1, tick=1)
    memory.remember(
        [
            MemoryEvent(
                id="e1", text="Aglaea wove a thread at Okhema.", cycle=1, round=1, tick=1, witnesses=["Aglaea"]
            ),
            MemoryEvent(id="e2", text="Mydeimos fought at Kremnos.", cycle=1, round=1, tick=1, witnesses=["Mydeimos"]),
        ]
    )
    pending = (MemoryEvent(id="e3", text="Aglaea met Mydeimos.", cycle=1, round=2, tick=2, witnesses=["Aglaea"]),)
    queries = {"Aglaea": "the golden thread", "Mydeimos": "the battle"}
    now = Moment(cycle=1, round=3, tick=3)

    def ahead(request: RecallRequest) -> dict:
        started = memory.anticipate_recall(lambda: request)
        assert started is not None
        started.result(timeout=60)
        assert memory._ranked_ahead is not None
        return memory._ranked_ahead[2]

    ranked = ahead(RecallRequest(queries, 2, now, pending))
    fresh = memory._recall(RecallRequest(queries, 2, now, pending))
    assert ranked == fresh and next(m.id for m in ranked["Aglaea"]).split("@")[0] in {"e1", "e3"}
    assert memory.recall(dict(queries), 2, now, list(pending)) is ranked  # the same request, as the director asks it

    ranked = ahead(RecallRequest(queries, 2, now, pending))
    assert memory.recall(queries, 3, now, pending) is not ranked  # another k: ranked afresh

    ranked = ahead(RecallRequest(queries, 2, now, pending))
    memory.touch({"Aglaea": ["e1"]}, first)  # what is held changed since: the answer ranked ahead is stale
    assert memory.recall(queries, 2, now, pending) is not ranked
