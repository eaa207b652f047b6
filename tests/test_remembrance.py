"""Remembrance inside the society: seeds at genesis, importance, reflections, and `memory inspect`."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.contracts.events import ProgressEvent, Reflected
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.memory.chroma_index import open_chroma
from amphoreus_graph.memory.importance import ModelImportance, PathImportance
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.records import PUBLIC, MemoryRecord
from amphoreus_graph.memory.reflection import ModelReflector, OfflineReflector
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store import MemorySpec, open_memory
from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.models.gateway import ChatCaller, Role
from amphoreus_graph.society.inspect import inspect_recall
from amphoreus_graph.society.runner import RunConfig, Simulation

TRIO = load_scenario("trio")


@pytest.fixture(scope="module")
def trio_run(tmp_path_factory):
    """One trio run (2 cycles × 4 rounds), its stream of events, and its memory."""
    import asyncio

    run = tmp_path_factory.mktemp("remembrance") / "trio"
    sim = Simulation(RunConfig(scenario="trio", cycles=2, seed=3, out=run))

    async def collect() -> list[ProgressEvent]:
        return [e async for e in sim.stream()]

    events = asyncio.run(collect())
    memory = open_memory(MemorySpec(directory=run / "memory"), run.name, TRIO.agent_names)
    records = {owner: memory.records(owner) for owner in [*TRIO.agent_names, PUBLIC]}
    memory.close()
    return run, events, records


def test_seed_memories_are_planted_at_genesis(trio_run):
    _, _, records = trio_run
    texts = {owner: [r.text for r in rows if r.kind is MemoryKind.SEED] for owner, rows in records.items()}
    assert any("promised Phainon" in t for t in texts["Cyrene"]), "Remembrance keeps its seed"
    assert not any("promised Phainon" in t for t in texts["Anaxagoras"] + texts["Phainon"]), "seeds are private"
    assert any("Vortex of Genesis remakes the world" in t for t in texts[PUBLIC]), "public seeds survive resets"


def test_reflections_appear_and_cite_existing_evidence(trio_run):
    _, events, records = trio_run
    reflected = [e for e in events if isinstance(e, Reflected)]
    assert reflected, "the budget is spent within a trio run, so someone reflects"
    cyrene = {r.id: r for r in records["Cyrene"]}
    mine = [r for r in cyrene.values() if r.kind is MemoryKind.REFLECTION]
    assert mine, "Cyrene (Remembrance) keeps her reflections"
    for reflection in mine:
        assert reflection.evidence and set(reflection.evidence) <= set(cyrene), "evidence ids exist"


def test_memory_inspect_shows_scores_without_touching_the_store(trio_run, cli):
    run, _, records = trio_run
    code, out, err = cli(
        "memory", "inspect", str(run), "--agent", "Cyrene", "--query", "a promise to Phainon", "-k", "3"
    )
    assert code == 0 and "Cyrene recalls" in out, err
    _, found = inspect_recall(run, "Cyrene", "a promise to Phainon", 3)
    assert any("promised Phainon" in m.text for m in found)
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
    memory = open_memory(MemorySpec(directory=run / "memory"), run.name, TRIO.agent_names)
    assert memory.records("Cyrene") == records["Cyrene"], "inspection must not change last-accessed ticks"
    memory.close()
    code, _, err = cli("memory", "inspect", str(run), "--agent", "Nobody", "--query", "x")
    assert code == 2 and "not a heir of trio" in err


def test_offline_importance_weighs_involvement_and_path():
    rater = PathImportance(TRIO)
    attack = MemoryEvent(
        id="e",
        text="Phainon attacked Anaxagoras.",
        cycle=1,
        round=1,
        importance=5,
        action="attack",
        tags=["violence"],  # what the world says an attack is about: a Path feels by tags
        involved=["Phainon", "Anaxagoras"],
        witnesses=["Phainon", "Anaxagoras", "Cyrene"],
    )
    rated = rater.rate([attack])["e"]
    assert rated["Anaxagoras"] > rated["Cyrene"], "the target cares more than a bystander"
    assert rated["Phainon"] == 5 + 1 + 1, "the actor is involved, and Destruction feels strongly about attacks"


def test_model_importance_rates_a_round_in_one_call_and_falls_back():
    events = [
        MemoryEvent(id=f"e{i}", text=f"event {i % 3}", cycle=1, round=1, importance=3, witnesses=["Cyrene"])
        for i in range(4)
    ]  # e3 repeats e0's text: rated once
    model = FakeListChatModel(responses=['{"ratings": [9, 2, 4]}'])
    rater = ModelImportance(ChatCaller(model, role=Role.IMPORTANCE), PathImportance(TRIO))
    first = rater.rate(events)
    assert [first[f"e{i}"]["Cyrene"] for i in range(4)] == [9, 2, 4, 9]
    assert rater.rate(events) == first and model.i == 0, "cached by text: the model was not asked again"

    authored = [
        MemoryEvent(id=f"k{i}", text=f"kept {i}", cycle=1, round=1, importance=7, witnesses=["Cyrene"], kind=kind)
        for i, kind in enumerate([MemoryKind.SEED, MemoryKind.REFLECTION])
    ]
    assert {e: r["Cyrene"] for e, r in rater.rate(authored).items()} == {"k0": 7, "k1": 7}
    assert model.i == 0, "a seed's and a reflection's importance were set by their makers: not asked"

    unusable = FakeListChatModel(responses=['{"ratings": [9]}', "no idea"])  # a wrong count, then a failed repair
    rater = ModelImportance(ChatCaller(unusable, role=Role.IMPORTANCE), PathImportance(TRIO))
    assert {e: r["Cyrene"] for e, r in rater.rate(events[:2]).items()} == {"e0": 3, "e1": 3}, "base weights stand"


def _records(n: int) -> list[MemoryRecord]:
    return [
        MemoryRecord(
            id=f"r{i}@Cyrene",
            owner="Cyrene",
            text=f"Phainon guarded the gate, night {i}.",
            event_id=f"r{i}",
            cycle=1,
            round=i,
            created=i,
            last_accessed=i,
            importance=5,
            kind=MemoryKind.OBSERVATION,
        )
        for i in range(n)
    ]


async def test_model_reflection_cites_its_evidence_or_falls_back():
    def reflector(model: FakeListChatModel) -> ModelReflector:
        return ModelReflector(ChatCaller(model, role=Role.REFLECT), OfflineReflector(TRIO.agent_names))

    good = FakeListChatModel(responses=[json.dumps({"insight": "Phainon never sleeps.", "cites": [1, 2]})])
    insight, cites = await reflector(good).areflect("Cyrene", "Remembrance", _records(3))
    assert insight == "Phainon never sleeps." and cites == ["r0@Cyrene", "r1@Cyrene"]
    bad = FakeListChatModel(responses=["I cannot reflect."])  # asked, then asked to repair: still unusable
    insight, cites = await reflector(bad).areflect("Cyrene", "Remembrance", _records(3))
    assert insight.startswith("Cyrene reflects:") and cites


async def test_the_agents_due_reflect_together():
    """Three agents due, a model taking 0.3 s a call: one call's time, not three."""
    slow = ModelReflector(
        ChatCaller(ScriptedChatModel(latency_s=0.3), role=Role.REFLECT), OfflineReflector(TRIO.agent_names)
    )
    memory = Remembrance(InMemoryIndex("together"), TRIO.agent_names, default_embedder(), reflector=slow)
    days = [
        MemoryEvent(id=f"e{i}", text=f"Day {i} at Okhema.", cycle=1, round=i, witnesses=TRIO.agent_names)
        for i in range(3)
    ]
    memory.remember(days)
    started = time.perf_counter()
    made = await asyncio.to_thread(memory.reflect, TRIO.agent_names, Moment(cycle=1, round=3, tick=3))
    assert len(made) == 3 and time.perf_counter() - started < 0.8


def test_a_broken_seed_file_is_one_line_and_writes_nothing(tmp_path, cli):
    seeds = tmp_path / "seeds" / "trio"
    seeds.mkdir(parents=True)
    (seeds / "bad.yaml").write_text("- text: hello\n  agents: [Stranger]\n")
    out = tmp_path / "run"
    code, _, err = cli(
        "simulate", "--scenario", "trio", "--seeds-dir", str(tmp_path / "seeds"), "--out", str(out), "--quiet"
    )
    assert code == 2 and "bad.yaml" in err and "Stranger" in err and "Traceback" not in err
    assert not out.exists()


def test_a_memory_directory_in_use_is_one_line(tmp_path, cli):
    _, lock = open_chroma(tmp_path / "busy")
    try:
        code, _, err = cli(
            "simulate", "--scenario", "trio", "--memory-dir", str(tmp_path / "busy"), "--out", str(tmp_path / "r")
        )
    finally:
        assert lock is not None
        lock.release()
    assert code == 2 and "in use by another running simulation" in err and "Traceback" not in err


def test_an_unloadable_embedder_is_one_line(tmp_path, cli):
    code, _, err = cli(
        "simulate", "--scenario", "trio", "--embedder", str(tmp_path / "no-model"), "--out", str(tmp_path / "r")
    )
    assert code == 2 and "--embedder" in err and "cannot load it offline" in err


@pytest.mark.slow
def test_a_society_runs_on_a_chroma_server(tmp_path, cli, chroma_url):
    code, _, err = cli(
        "simulate",
        "--scenario",
        "trio",
        "--cycles",
        "2",
        "--chroma-url",
        chroma_url,
        "--out",
        str(tmp_path / "srv"),
        "--quiet",
    )
    assert code == 0, err
    assert not (tmp_path / "srv" / "memory").exists(), "memory lives on the server"
    code, out, _ = cli("memory", "inspect", str(tmp_path / "srv"), "--agent", "Cyrene", "--query", "promise")
    assert code == 0 and "Cyrene recalls" in out
    _, found = inspect_recall(tmp_path / "srv", "Cyrene", "a promise to Phainon", 5)
    assert any("promised Phainon" in m.text for m in found)
