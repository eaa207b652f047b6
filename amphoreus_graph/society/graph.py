"""The society graph: one cycle of rounds.

    genesis → director → perceive ─Send×N→ heir_turn → game_master → remember → record ─┐
                 ▲                                                                    │
                 └──────────────────────── next round ◄──────────────────────────────┘ → END

`perceive` recalls for all heirs in one embedding batch; heir turns run concurrently; the game master
resolves them together; `remember` embeds the round's events in one batch; `record` writes samples.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from functools import cache
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from amphoreus_graph.data.samples import Sample
from amphoreus_graph.memory.records import MemoryEvent, Moment
from amphoreus_graph.memory.seeds import load_seeds, seeds_folder
from amphoreus_graph.policy.base import Decision, PolicyResult, RecalledMemory, TurnContext
from amphoreus_graph.policy.offline import stable_rng
from amphoreus_graph.policy.prompt import decision_json, render_messages
from amphoreus_graph.scenario import Scenario, load_scenario
from amphoreus_graph.society.chronicle import RoundRecord
from amphoreus_graph.society.perception import build_turn, director_situations, living_heirs, memory_query
from amphoreus_graph.society.rules import resolve_round
from amphoreus_graph.society.services import Services, SocietySettings, services_for
from amphoreus_graph.society.state import SocietyInput, SocietyState, add_stats
from amphoreus_graph.society.world import World


@cache
def scenario_of(name_or_path: str) -> Scenario:
    """Scenarios are read once per process: a run must not change under its own feet."""
    return load_scenario(name_or_path)


async def aservices_of(state: SocietyState, runtime: Runtime[SocietySettings]) -> Services:
    """Resolve a run's services off the event loop: the first call opens Chroma and loads the embedder."""
    return await asyncio.to_thread(services_for, runtime.context, state["run_id"], scenario_of(state["scenario"]))


def emit(event: dict[str, Any]) -> None:
    get_stream_writer()(event)


def now_of(state: SocietyState, world: World) -> Moment:
    """The world's clock as memory sees it (ticks keep rising across cycles)."""
    limit = state.get("rounds") or scenario_of(state["scenario"]).rounds_per_cycle
    return Moment.of(world.cycle, world.round, limit)


async def genesis(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Start a cycle from the scenario's world (cycle 1 also plants the seed memories); name the run after
    the thread if no name was given."""
    # A dict input (the HTTP API, Studio, `graph.invoke({})`) is not run through SocietyInput by LangGraph,
    # so its defaults are applied here and written back to the state for the nodes that follow.
    raw: dict[str, Any] = dict(state)
    given = {k: raw[k] for k in SocietyInput.model_fields if raw.get(k) is not None}
    inputs = SocietyInput.model_validate(given)
    scenario = scenario_of(inputs.scenario)
    cycle = inputs.cycle
    run_id = inputs.run_id or str(get_config().get("configurable", {}).get("thread_id") or "studio")
    world = World.genesis(scenario, cycle)
    if cycle == 1:
        services = await asyncio.to_thread(services_for, runtime.context, run_id, scenario)
        folder = seeds_folder(services.seeds_dir, scenario.name)
        seeds = await asyncio.to_thread(load_seeds, folder, scenario.heir_names)
        await asyncio.to_thread(services.memory.remember, seeds)
    emit({"type": "cycle_started", "cycle": cycle, "heirs": len(scenario.heirs)})
    return {
        "scenario": inputs.scenario,
        "seed": inputs.seed,
        "rounds": inputs.rounds,
        "run_id": run_id,
        "cycle": cycle,
        "world": world.model_dump(mode="json"),
        "turns": {},
    }


def director(state: SocietyState) -> dict[str, Any]:
    """Lycurgus opens a round: advance the clock and frame the situation for each heir."""
    scenario = scenario_of(state["scenario"])
    world = World.model_validate(state["world"])
    world.round += 1
    situations = director_situations(world, scenario, state["seed"], state["run_id"])
    emit({"type": "round_started", "cycle": world.cycle, "round": world.round, "heirs": len(situations)})
    return {"world": world.model_dump(mode="json"), "situations": situations, "turns": {}}


async def perceive(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Recall memories for every heir in one batch (embedding and Chroma run off the event loop)."""
    scenario = scenario_of(state["scenario"])
    world = World.model_validate(state["world"])
    services = await aservices_of(state, runtime)
    queries = {h: memory_query(h, world, scenario, s) for h, s in state["situations"].items()}
    recalled = await asyncio.to_thread(services.memory.recall, queries, services.recall_k, now_of(state, world))
    return {"recalled": {h: [m.model_dump() for m in found] for h, found in recalled.items()}}


def fan_out(state: SocietyState) -> list[Send]:
    """One concurrent turn per living heir, each with its own TurnContext."""
    scenario = scenario_of(state["scenario"])
    world = World.model_validate(state["world"])
    sends = []
    for heir in living_heirs(world, scenario):
        turn = build_turn(
            heir,
            world,
            scenario,
            situation=state["situations"][heir],
            memories=[RecalledMemory.model_validate(m) for m in state["recalled"].get(heir, [])],
            seed=state["seed"],
            run_id=state["run_id"],
        )
        sends.append(
            Send(
                "heir_turn",
                {"turn": turn.model_dump(mode="json"), "run_id": state["run_id"], "scenario": state["scenario"]},
            )
        )
    return sends


async def heir_turn(payload: dict[str, Any], runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """A heir decides. The policy never raises: model faults come back flagged."""
    turn = TurnContext.model_validate(payload["turn"])
    scenario = scenario_of(payload["scenario"])
    services = await asyncio.to_thread(services_for, runtime.context, payload["run_id"], scenario)
    result = await services.policy.adecide(turn)
    decision = result.decision
    emit(
        {
            "type": "turn_done",
            "heir": turn.heir,
            "action": decision.action.value,
            "target": decision.target,
            "flags": result.flags,
        }
    )
    record = {
        "turn": turn.model_dump(mode="json"),
        "result": result.model_dump(mode="json"),
        "path": turn.path,
        "model": services.policy.name,
    }
    return {"turns": {turn.heir: record}}


def game_master(state: SocietyState) -> dict[str, Any]:
    """Resolve all of the round's decisions at once into events and a new world."""
    scenario = scenario_of(state["scenario"])
    world = World.model_validate(state["world"])
    decisions = {h: Decision.model_validate(t["result"]["decision"]) for h, t in state["turns"].items()}
    rng = stable_rng(state["seed"], state["run_id"], world.cycle, world.round, "game-master")
    limit = state.get("rounds") or scenario.rounds_per_cycle
    world, events = resolve_round(world, scenario, decisions, rng, limit)
    return {
        "world": world.model_dump(mode="json"),
        "round_events": [e.model_dump(mode="json") for e in events],
        # The turns have read their memories: keep only which were used (for `remember`), not their text.
        "recalled": {},
        "used_memories": [m["id"] for found in state["recalled"].values() for m in found if not m.get("public")],
    }


async def remember(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Mark the memories the turns used as accessed, embed the round's events once and file them for their
    witnesses (idempotent upserts); heirs whose unreflected importance passed the budget then reflect."""
    services = await aservices_of(state, runtime)
    scenario = scenario_of(state["scenario"])
    events = [MemoryEvent.model_validate(e) for e in state["round_events"]]
    now = now_of(state, World.model_validate(state["world"]))
    await asyncio.to_thread(services.memory.touch, state.get("used_memories") or [], now)
    gained = await asyncio.to_thread(services.memory.remember, events)
    pending = dict(state.get("unreflected") or {})
    for heir, importance in gained.items():
        pending[heir] = pending.get(heir, 0.0) + importance
    due = [h for h in scenario.heir_names if pending.get(h, 0.0) >= scenario.memory.reflection_budget]
    if due:
        reflections = await asyncio.to_thread(services.memory.reflect, due, now)
        for event in reflections:
            emit({"type": "reflected", "heir": event.witnesses[0], "text": event.text, "evidence": event.evidence})
        for heir in due:
            pending[heir] = 0.0
    return {"unreflected": {h: round(v, 3) for h, v in pending.items()}, "used_memories": []}


def round_samples(state: SocietyState) -> list[Sample]:
    """The round's turns as samples, in the scenario's heir order. A pure function of the state `record` starts
    from, so a damaged shard can be rebuilt exactly from the checkpoint's history."""
    world = World.model_validate(state["world"])
    samples = []
    for heir in [h for h in scenario_of(state["scenario"]).heir_names if h in state["turns"]]:
        turn = state["turns"][heir]
        context = TurnContext.model_validate(turn["turn"])
        result = PolicyResult.model_validate(turn["result"])
        samples.append(
            Sample(
                id=Sample.make_id(state["run_id"], world.cycle, world.round, heir),
                run=state["run_id"],
                cycle=world.cycle,
                round=world.round,
                heir=heir,
                path=turn["path"],
                model=turn["model"],
                messages=[*render_messages(context), {"role": "assistant", "content": decision_json(result.decision)}],
                decision=result.decision,
                flags=result.flags,
                context=context.as_recorded(),
            )
        )
    return samples


def round_chronicle(state: SocietyState) -> RoundRecord:
    """The round as the chronicle keeps it (pure, like `round_samples`)."""
    world = World.model_validate(state["world"])
    events = [MemoryEvent.model_validate(e) for e in state.get("round_events") or []]
    return RoundRecord(cycle=world.cycle, round=world.round, scenario=state["scenario"], world=world, events=events)


def round_cost(state: SocietyState) -> Counter[str]:
    """What the round's turns cost (model calls, tokens, faults), to add to the run's totals."""
    delta: Counter[str] = Counter()
    for turn in state["turns"].values():
        result = PolicyResult.model_validate(turn["result"])
        delta.update(
            turns=1,
            model_calls=result.model_calls,
            failures=result.failures,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            fallbacks=int("fallback" in result.flags),
            repaired=int("repaired" in result.flags),
        )
    return delta


async def record(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Write each turn of the round as a sample and the round to the chronicle (exactly once), and add up what
    the round cost."""
    services = await aservices_of(state, runtime)
    world = World.model_validate(state["world"])
    samples = round_samples(state)
    delta = round_cost(state)
    offsets = state.get("sample_offsets") or {}
    if services.samples is not None:
        offsets = await asyncio.to_thread(services.samples.write_round, samples, offsets)
        delta["samples_written"] = len(samples)
    if services.chronicle is not None:
        offsets = await asyncio.to_thread(services.chronicle.write_round, round_chronicle(state), offsets)
    emit(
        {
            "type": "round_done",
            "cycle": world.cycle,
            "round": world.round,
            "black_tide": world.black_tide,
            "delivered": len(world.delivered),
            "outcome": world.outcome.value if world.outcome else None,
            "actions": {s.heir: s.decision.action.value for s in samples},
            "targets": {s.heir: s.decision.target for s in samples},
            "heirs": {name: heir.model_dump(mode="json") for name, heir in world.heirs.items()},
        }
    )
    return {"stats": add_stats(state.get("stats"), delta), "sample_offsets": offsets, "turns": {}}


def next_round(state: SocietyState) -> str:
    return END if state["world"].get("outcome") else "director"


def build_society_graph() -> StateGraph[Any, SocietySettings, Any, Any]:
    """The uncompiled one-cycle graph; compile it with or without a checkpointer."""
    builder = StateGraph(SocietyState, context_schema=SocietySettings, input_schema=SocietyInput)
    add_cycle_nodes(builder)
    builder.add_edge(START, "genesis")
    builder.add_edge("genesis", "director")
    builder.add_conditional_edges("record", next_round, ["director", END])
    return builder


def add_cycle_nodes(builder: StateGraph[Any, SocietySettings, Any, Any]) -> None:
    """The round loop's nodes and fixed edges, shared by the society and recurrence graphs."""
    builder.add_node("genesis", genesis)
    builder.add_node("director", director)
    builder.add_node("perceive", perceive)
    builder.add_node("heir_turn", heir_turn)  # type: ignore[arg-type]
    builder.add_node("game_master", game_master)
    builder.add_node("remember", remember)
    builder.add_node("record", record)
    builder.add_edge("director", "perceive")
    builder.add_conditional_edges("perceive", fan_out, ["heir_turn"])
    builder.add_edge("heir_turn", "game_master")
    builder.add_edge("game_master", "remember")
    builder.add_edge("remember", "record")
