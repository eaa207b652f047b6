"""The recurrence graph: the world lives through cycles; between them it resets and memories carry over.

    genesis → (the society's round loop) → end_cycle ─ more cycles? → genesis (world reset)
                                                    └ done → END

The round loop's nodes are the society graph's own (not a copy): one flat graph checkpoints every step,
so a killed run resumes mid-round exactly where it stopped.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from amphoreus_graph.memory.records import MemoryEvent, MemoryKind
from amphoreus_graph.society.graph import add_cycle_nodes, aservices_of, emit, now_of, scenario_of
from amphoreus_graph.society.services import SocietySettings
from amphoreus_graph.society.state import RecurrenceInput, RecurrenceState
from amphoreus_graph.society.world import Outcome, World

OUTCOME_TEXT = {
    Outcome.ERA_NOVA: "every Coreflame reached the Vortex and Era Nova dawned",
    Outcome.BLACK_TIDE: "the Black Tide swallowed the world",
    Outcome.ALL_FALLEN: "every heir fell",
    Outcome.ROUND_LIMIT: "the journey ran out of time",
}


def cycle_summary(world: World) -> dict[str, Any]:
    return {
        "cycle": world.cycle,
        "outcome": (world.outcome or Outcome.ROUND_LIMIT).value,
        "rounds": world.round,
        "black_tide": world.black_tide,
        "coreflames_delivered": len(world.delivered),
        "coreflames": world.coreflames_per_heir(),
        "fallen": sorted(h for h, s in world.heirs.items() if s.fallen),
    }


def cycles_of(state: RecurrenceState) -> int:
    """How many cycles to run; a dict input skips RecurrenceInput, so its default is applied here."""
    return state.get("cycles") or RecurrenceInput.model_fields["cycles"].default


async def end_cycle(state: RecurrenceState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Remember how the cycle ended, apply each Path's retention, then reset for the next cycle."""
    scenario = scenario_of(state["scenario"])
    world = World.model_validate(state["world"])
    services = await aservices_of(state, runtime)
    outcome = world.outcome or Outcome.ROUND_LIMIT
    echo = MemoryEvent(
        id=f"c{world.cycle}-end",
        text=(
            f"Cycle {world.cycle} ended after {world.round} rounds: {OUTCOME_TEXT[outcome]}. "
            f"{len(world.delivered)} of {len(scenario.titans)} Coreflames were delivered."
        ),
        cycle=world.cycle,
        round=world.round,
        tick=now_of(state, world).tick,
        witnesses=scenario.heir_names,
        importance=8,
        kind=MemoryKind.CYCLE_ECHO,
    )
    retention = {h.name: scenario.retention_for(h.path) for h in scenario.heirs}

    def carry() -> dict[str, int]:
        services.memory.remember([echo])
        return services.memory.carry_over(retention, world.cycle + 1)

    kept = await asyncio.to_thread(carry)
    summary = cycle_summary(world) | {"memories_kept": kept}
    emit({"type": "cycle_done", **summary})
    update: dict[str, Any] = {"cycle_summaries": [*(state.get("cycle_summaries") or []), summary]}
    if world.cycle < cycles_of(state):
        update["cycle"] = world.cycle + 1
    return update


def after_round(state: RecurrenceState) -> str:
    return "end_cycle" if state["world"].get("outcome") else "director"


def after_cycle(state: RecurrenceState) -> str:
    return "genesis" if len(state.get("cycle_summaries") or []) < cycles_of(state) else END


def build_recurrence_graph() -> StateGraph[Any, SocietySettings, Any, Any]:
    """The uncompiled many-cycle graph; compile it with or without a checkpointer."""
    builder = StateGraph(RecurrenceState, context_schema=SocietySettings, input_schema=RecurrenceInput)
    add_cycle_nodes(builder)
    builder.add_node("end_cycle", end_cycle)
    builder.add_edge(START, "genesis")
    builder.add_edge("genesis", "director")
    builder.add_conditional_edges("record", after_round, ["director", "end_cycle"])
    builder.add_conditional_edges("end_cycle", after_cycle, ["genesis", END])
    return builder
