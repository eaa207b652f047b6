"""The recurrence graph: the world lives through cycles; between them it resets and memories carry over.

    open_run → genesis → (the society's round loop) → end_cycle ─ more cycles? → genesis (world reset)
                                                               └ done → END

The round loop's nodes are the society graph's own (not a copy): one flat graph checkpoints every step,
so a killed run resumes mid-round exactly where it stopped.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from amphoreus_graph.contracts.events import CycleDone
from amphoreus_graph.contracts.ids import echo_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind
from amphoreus_graph.contracts.world import CycleEnd, WorldView
from amphoreus_graph.errors import graph_input
from amphoreus_graph.models.gateway import metered
from amphoreus_graph.society.config import save_graph_config
from amphoreus_graph.society.graph import add_cycle_nodes, aservices_of, emit, ended, now_of, run_id_of, settings_of
from amphoreus_graph.society.ledger import file_reset
from amphoreus_graph.society.services import SocietySettings
from amphoreus_graph.society.state import RecurrenceInput, RecurrenceState


def cycle_summary(end: CycleEnd, view: WorldView) -> dict[str, Any]:
    """One cycle as summary.json, the CLI and the report show it, in the world's own words."""
    return {
        "cycle": view.cycle,
        "outcome": end.outcome,
        "text": end.text,
        "rounds": view.round,
        "score": end.score,
        "tally": end.tally,
        "facts": end.facts,
        "fallen": sorted(name for name, agent in view.agents.items() if not agent.active),
    }


def cycles_of(state: RecurrenceState) -> int:
    """How many cycles to run; a dict input skips RecurrenceInput, so its default is applied here."""
    return state.get("cycles") or RecurrenceInput.model_fields["cycles"].default


async def open_run(state: RecurrenceState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """A run the graph sets up from its settings alone (Studio, `ainvoke` with a context of settings) writes
    RUN/config.json as the CLI's runs do, so its report, interviews and forks need only its directory. A run
    handed its services (`Simulation`) has written its own."""
    inputs = graph_input(RecurrenceInput, state, "recurrence input")
    settings, run_id = settings_of(runtime), run_id_of(inputs.run_id)
    if settings.ready(run_id) is None:  # off the event loop: relative directories resolve against the cwd
        await asyncio.to_thread(save_graph_config, inputs, inputs.cycles, settings, run_id, keep=False)
    return {}


async def end_cycle(state: RecurrenceState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Remember how the cycle ended, apply each Path's retention, then reset for the next cycle."""
    services = await aservices_of(state, runtime)
    scenario = services.scenario
    end = scenario.world.end(state["world"])
    view = scenario.world.view(state["world"])
    echo = MemoryEvent(
        id=echo_id(view.cycle),
        text=end.text,
        cycle=view.cycle,
        round=view.round,
        tick=now_of(state, scenario).tick,
        witnesses=scenario.agent_names,
        importance=8,
        kind=MemoryKind.CYCLE_ECHO,
    )
    retention = {a.name: scenario.retention_for(a.path) for a in scenario.agents}
    await services.before_filing()

    with metered() as meter:
        kept, filed = await asyncio.to_thread(file_reset, services.memory, state, echo, retention, view.cycle + 1)
    summary = cycle_summary(end, view) | {"memories_kept": kept}
    emit(CycleDone(**summary))
    update: dict[str, Any] = filed | {
        "cycle_summaries": [*(state.get("cycle_summaries") or []), summary],
        "model_use": meter.as_json(),
    }
    if view.cycle < cycles_of(state):
        update["cycle"] = view.cycle + 1
    return update


def after_round(state: RecurrenceState, runtime: Runtime[SocietySettings]) -> str:
    return "end_cycle" if ended(state, runtime) else "director"


def after_cycle(state: RecurrenceState) -> str:
    return "genesis" if len(state.get("cycle_summaries") or []) < cycles_of(state) else END


def build_recurrence_graph() -> StateGraph[Any, SocietySettings, Any, Any]:
    """The uncompiled many-cycle graph; compile it with or without a checkpointer."""
    builder = StateGraph(RecurrenceState, context_schema=SocietySettings, input_schema=RecurrenceInput)
    add_cycle_nodes(builder)
    builder.add_node("open_run", open_run)
    builder.add_node("end_cycle", end_cycle)
    builder.add_edge(START, "open_run")
    builder.add_edge("open_run", "genesis")
    builder.add_edge("genesis", "director")
    builder.add_conditional_edges("remember", after_round, ["director", "end_cycle"])
    builder.add_conditional_edges("end_cycle", after_cycle, ["genesis", END])
    return builder
