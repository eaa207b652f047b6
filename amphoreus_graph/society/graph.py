"""The society graph: one cycle of rounds, in any world.

    genesis → director ─Send×N→ agent_turn ─────→ game_master → record ─┬→ director (next round)
                       └─Send──→ file_behind ──┘                       └→ remember → director | END

The world (the scenario's `World`) does everything that names its concepts: it frames each round, shows each
agent its situation and options, and resolves the round's decisions. The graph only moves state between it,
memory and the policy: `director` frames the round and recalls for all agents in one embedding batch; agent turns
run concurrently; `record` writes samples and the chronicle (and lets go of the round's turns, so fewer
checkpoints carry them).

Memory work stays off the model's critical path: a round's events are filed (written to the index, importance
rated, reflections made) by `file_behind`, which runs beside the next round's agent turns, while the model thinks.
Until then `director` searches them in process, so every round recalls the last one. The last round of a cycle is
filed by `remember` before the cycle ends. A scenario with `memory.write_behind: false` files every round with
`remember` before the next round begins instead. Either way the filing is a task of the checkpointed graph that
starts only once the checkpoint its step began from is on disk, so a killed run files exactly what it would have.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

from langgraph.config import get_config, get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from amphoreus_graph.catalogs.scenario import Scenario, scenario_of
from amphoreus_graph.contracts.events import CycleStarted, Event, Reflected, RoundDone, RoundStarted, TurnDone
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.memory_seam import Prefetching, RecallRequest
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, PolicyResult, RecalledMemory, TurnContext
from amphoreus_graph.contracts.world import WorldState
from amphoreus_graph.errors import graph_input
from amphoreus_graph.memory.attention import attend
from amphoreus_graph.memory.seeds import load_seeds
from amphoreus_graph.models.gateway import RoleUse, metered, requests_sent
from amphoreus_graph.policy.discretion import GUARD_FLAGS, discreet
from amphoreus_graph.policy.prompt import decision_json, render_messages
from amphoreus_graph.society.chronicle import RoundRecord
from amphoreus_graph.society.config import save_graph_config
from amphoreus_graph.society.ledger import file_checked, fold
from amphoreus_graph.society.perception import TurnMemo, build_turn
from amphoreus_graph.society.samples import Sample
from amphoreus_graph.society.services import Services, SocietySettings, default_settings
from amphoreus_graph.society.state import SocietyInput, SocietyState, add_stats
from amphoreus_graph.society.step_state import step_state


def settings_of(runtime: Runtime[SocietySettings]) -> SocietySettings:
    return runtime.context if runtime.context is not None else default_settings()


def services_of(state: Mapping[str, Any], runtime: Runtime[SocietySettings]) -> Services:
    """The run's services, which carry its loaded scenario to every node and edge. Built the first time a step of
    the run asks (a new run's genesis, or a resumed run's first step): the one place the scenario the state names
    is read. Blocking then: call it off the event loop, as `aservices_of` does."""
    settings = settings_of(runtime)
    if (ready := settings.ready(state["run_id"])) is not None:
        return ready
    return settings.services(state["run_id"], scenario_of(state["scenario"]))


async def aservices_of(state: Mapping[str, Any], runtime: Runtime[SocietySettings]) -> Services:
    """The run's services; built off the event loop the first time (that may open Chroma and load the embedder)."""
    if (ready := settings_of(runtime).ready(state["run_id"])) is not None:
        return ready
    return await asyncio.to_thread(services_of, state, runtime)


def run_id_of(given: str) -> str:
    """A run's identity: as its input names it, else its thread's id (Studio), else `studio`."""
    return given or str(get_config().get("configurable", {}).get("thread_id") or "studio")


def head_start(services: Services) -> Prefetching | None:
    """The run's memory, if it can start work ahead of need (a speed capability; a memory without it runs the
    same society)."""
    return services.memory if isinstance(services.memory, Prefetching) else None


def emit(event: Event) -> None:
    """Report progress on LangGraph's custom stream (Studio, langgraph_sdk clients, `Simulation.stream()`)."""
    get_stream_writer()(event.payload())


def round_limit(state: SocietyState, scenario: Scenario) -> int:
    return state.get("rounds") or scenario.rounds_per_cycle


def now_of(state: SocietyState, scenario: Scenario, world: WorldState | None = None) -> Moment:
    """The clock of `world` (default: the state's) as memory sees it (ticks keep rising across cycles)."""
    world = state["world"] if world is None else world
    return Moment.of(int(world["cycle"]), int(world["round"]), round_limit(state, scenario))


async def genesis(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Start a cycle from the scenario's world (cycle 1 also plants the seed memories); name the run after
    the thread if no name was given. A society thread (one cycle) set up from its settings alone writes its
    run's config.json at cycle 1, as a recurrence thread's `open_run` does, unless one is there already."""
    # A dict input (the HTTP API, Studio, `graph.invoke({})`) is not run through SocietyInput by LangGraph,
    # so its defaults are applied here and written back to the state for the nodes that follow.
    inputs = graph_input(SocietyInput, state, "society input")
    cycle = inputs.cycle
    run_id = run_id_of(inputs.run_id)
    settings = settings_of(runtime)
    set_up_here = settings.ready(run_id) is None
    # the scenario is read with the services, off the event loop: a file named by a relative path resolves against
    # the working directory, which `langgraph dev` refuses on its loop
    services = await aservices_of({"run_id": run_id, "scenario": inputs.scenario}, runtime)
    scenario = services.scenario
    if cycle == 1 and set_up_here:
        await asyncio.to_thread(save_graph_config, inputs, 1, settings, run_id, keep=True)
    filed: dict[str, Any] = {}
    with metered() as meter:
        if cycle == 1:
            await services.before_filing()
            filed = await asyncio.to_thread(plant_seeds, services, scenario, state)
    emit(CycleStarted(cycle=cycle, agents=len(scenario.agents)))
    return filed | {
        "model_use": meter.as_json(),
        "scenario": inputs.scenario,
        "seed": inputs.seed,
        "rounds": inputs.rounds,
        "run_id": run_id,
        "cycle": cycle,
        "world": scenario.world.genesis(cycle),
        "turns": {},
        "round_events": [],  # the last cycle's were filed before it ended
        "used_memories": {},
    }


def plant_seeds(services: Services, scenario: Scenario, state: SocietyState) -> dict[str, Any]:
    """File the scenario's seed memories (a cycle 1 genesis); returns what the store then holds."""
    seeds = load_seeds(services.seeds, scenario.agent_names)
    return file_checked(services.memory, state, "seeds", lambda: services.memory.remember(seeds))[1]


async def director(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """The world's director opens a round: the clock advances, each acting agent is told its situation, and every
    agent recalls memories for it in one batch (embedding and Chroma off the event loop). A run whose budget is
    spent, or whose model has stopped deciding, stops here, before the round begins."""
    services = await aservices_of(state, runtime)
    scenario = services.scenario
    if services.guard is not None:
        opening = (int(state["world"]["cycle"]), int(state["world"]["round"]) + 1)
        services.guard.check(state.get("stats") or {}, state.get("model_use") or {}, len(scenario.agents), opening)
    framed, situations, queries = open_round(state, scenario, state["world"])
    emit(RoundStarted(cycle=framed["cycle"], round=framed["round"], agents=len(situations)))
    now = now_of(state, scenario, framed)
    unfiled = [MemoryEvent.model_validate(e) for e in state.get("round_events") or []]  # being written behind
    recalled = await asyncio.to_thread(services.memory.recall, queries, services.recall_k, now, unfiled)
    ahead = head_start(services)
    if ahead is not None and not files_behind(state, scenario):  # else `file_behind` starts the guess later
        ahead.anticipate(functools.partial(likely_next_queries, state, scenario, framed))
    return {
        "world": framed,
        "situations": situations,
        "recalled": {a: [m.model_dump() for m in found] for a, found in recalled.items()},
        "turns": {},
    }


def director_rng(state: SocietyState, scenario: Scenario, world: WorldState) -> random.Random:
    """The director's draws for the round after `world`'s."""
    opening = int(world["round"]) + 1
    return stable_rng(state["seed"], state["run_id"], world["cycle"], opening, scenario.world.labels.director)


def open_round(
    state: SocietyState, scenario: Scenario, world: WorldState
) -> tuple[WorldState, dict[str, str], dict[str, str]]:
    """The round the director opens from `world`: the world framed (with the draws of the round after `world`'s),
    each acting agent's situation, and its memory query."""
    rules = scenario.world
    framed, situations = rules.frame(world, director_rng(state, scenario, world))
    return framed, situations, {a: rules.memory_query(framed, a, s) for a, s in situations.items()}


def likely_next_queries(state: SocietyState, scenario: Scenario, framed: WorldState) -> list[str]:
    """The next round's memory queries as they will be if this round changes nothing they mention: the round
    opened from this one as it stands. In the shipped worlds ~90% of them come out the same (most agents stay
    where they are), so embedding them while the model thinks takes that work off the next round's path. A guess:
    the game master asks for the exact ones once the round is resolved, and recall embeds whatever is missing."""
    return list(open_round(state, scenario, copy.deepcopy(framed))[2].values())


def next_recall(
    state: SocietyState, scenario: Scenario, resolved: WorldState, noticed: list[MemoryEvent], k: int
) -> RecallRequest:
    """The recall the director will ask for once `resolved` (the world this round left) opens the next round, with
    this round's events still pending (written behind): exact, whatever the round changed."""
    framed, _, queries = open_round(state, scenario, copy.deepcopy(resolved))
    return RecallRequest(queries, k, now_of(state, scenario, framed), tuple(noticed))


def fan_out(state: SocietyState, runtime: Runtime[SocietySettings]) -> list[Send | str]:
    """One concurrent turn per acting agent (the Send names the agent alone: its turn is read from the state);
    after them, the filing of the last round's memories when the scenario writes behind. LangGraph starts a step's
    tasks in the order they are sent, so every turn has handed its model request to the gateway before
    `file_behind` begins. A round in which no one may act (everyone travelling, fallen or barred) is still a
    round: the world resolves it and time passes."""
    scenario = services_of(state, runtime).scenario
    sends: list[Send | str] = [
        Send("agent_turn", {"agent": agent, "run_id": state["run_id"], "scenario": state["scenario"]})
        for agent in scenario.world.actors(state["world"])
    ]
    if files_behind(state, scenario):
        # with what the step needs to guess the next round's queries: the round just opened, and the seed
        look_ahead = {"opened": state["world"], "seed": state["seed"]}
        sends.append(Send("file_behind", {key: state.get(key) for key in FILING_KEYS} | look_ahead))
    return sends or ["game_master"]  # no turns and nothing to file: straight to the world


def files_behind(state: SocietyState, scenario: Scenario) -> bool:
    """Whether the round opening now files the last one's memories beside its turns (`file_behind`)."""
    write_behind = scenario.memory.write_behind
    return write_behind and bool(state.get("round_events") or state.get("used_memories"))


def turn_of(state: SocietyState, agent: str, world: WorldState, scenario: Scenario, memo: TurnMemo) -> TurnContext:
    """What `agent` knows as it decides in `world` (the round as framed): its situation and recalled memories
    from the state. Asked again from the same state for its sample, so turns need not travel in checkpoints (the
    second time it is usually the turn `agent_turn` built, kept in the run's `memo`). In one run a round is framed
    once, so its cycle and round name the world (comparing whole worlds would cost every turn the society's size)."""
    situation, recalled = state["situations"][agent], state["recalled"].get(agent, [])
    return memo.get(
        agent,
        (world["cycle"], world["round"], situation, recalled, state["seed"], state["run_id"]),
        lambda: build_turn(
            agent,
            world,
            scenario,
            situation=situation,
            memories=[RecalledMemory.model_validate(m) for m in recalled],
            seed=state["seed"],
            run_id=state["run_id"],
        ),
    )


TURN_KEYS = ("run_id", "seed", "world", "situations", "recalled")  # what `turn_of` reads


async def agent_turn(payload: dict[str, Any], runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """An agent decides, on the turn built from the state its step started from (society/step_state.py: the Send
    names only the agent). The policy never raises: model faults come back flagged."""
    state = cast(SocietyState, step_state(TURN_KEYS))
    services = await aservices_of(payload, runtime)
    turn = turn_of(state, payload["agent"], state["world"], services.scenario, services.turns)
    with metered(log=services.calls) as meter:  # a reply that says a secret is asked again (counted) or redacted
        result = await discreet(services.policy, turn, await services.policy.adecide(turn))
    decision = result.decision
    emit(TurnDone(agent=turn.agent, action=decision.action, target=decision.target, flags=result.flags))
    record = {"result": result.model_dump(mode="json"), "path": turn.path, "model": services.policy.name}
    spent = meter.as_json()
    return {"turns": {turn.agent: record}, "model_use": spent, "agent_use": {turn.agent: spent}}


def game_master(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """The world resolves all of the round's decisions at once into events and a new state (a world whose model
    resolves it answers from the run's response cache); each event is kept for the witnesses who noticed it."""
    services = services_of(state, runtime)
    scenario = services.scenario
    world = scenario.world
    decisions = {a: Decision.model_validate(t["result"]["decision"]) for a, t in state["turns"].items()}
    rng = stable_rng(state["seed"], state["run_id"], state["world"]["cycle"], state["world"]["round"], "game-master")
    now = now_of(state, scenario)
    with metered(services.cache, services.calls) as meter:
        resolution = world.resolve(state["world"], decisions, rng, now, round_limit(state, scenario))
    cost = resolution.cost
    noticed = attend(resolution.events, scenario.memory.attention, f"{state['seed']}|{state['run_id']}")
    # The next round's recall, exact now that the round is resolved: its queries (the director's guess cached most
    # of them) and these events, which it searches as pending, embedded and ranked while `record` writes.
    if (ahead := head_start(services)) is not None:
        recall = functools.partial(next_recall, state, scenario, resolution.state, noticed, services.recall_k)
        ahead.anticipate_recall(recall)
        ahead.prepare(noticed, reflecting(state, scenario), now)  # what filing them will ask a model
    return {
        "world": resolution.state,
        "round_events": [e.model_dump(mode="json") for e in noticed],
        "round_flags": [*cost.flags, *([f"error: {cost.error}"] if cost.error else [])],
        "round_moment": now.model_dump(),
        "model_use": meter.as_json(),
        "decided_in": state["world"],  # with situations and recalled, what `record` rebuilds the turns from
        "used_memories": used_memories(state["recalled"]),
    }


def used_memories(recalled: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Each agent's ids of the private memories its turn recalled (agents who used none left out), by holder:
    `touch` marks each in its holder's own memory only, whatever another agent's ids look like."""
    used = {agent: [m["id"] for m in found if not m.get("public")] for agent, found in recalled.items()}
    return {agent: ids for agent, ids in used.items() if ids}


def reflecting(state: SocietyState, scenario: Scenario) -> list[str]:
    """The agents whose unreflected importance has passed the reflection budget: they reflect as the round is
    filed."""
    pending = state.get("unreflected") or {}
    return [a for a in scenario.agent_names if pending.get(a, 0.0) >= scenario.memory.reflection_budget]


FILING_KEYS = ("scenario", "run_id", "round_events", "round_moment", "used_memories", "unreflected", "memory_tally")


async def remember(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Node: file the round just recorded, before the next one opens (or as the cycle ends)."""
    return await filed(state, await aservices_of(state, runtime))


async def file_behind(payload: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Node, sent by `director` after the next round's turns with the round just filed (FILING_KEYS) and the
    round just opened (`opened`). Started after the turns (`fan_out`), it waits until the client loop has sent
    every request they handed it, so that filing does not take the CPU from them, then starts the guess at the
    next round's queries (`likely_next_queries`) and files."""
    services = await aservices_of(payload, runtime)
    await requests_sent()
    if (ahead := head_start(services)) is not None:
        opened = cast(WorldState, payload.get("opened"))
        ahead.anticipate(functools.partial(likely_next_queries, payload, services.scenario, opened))
    return await filed(payload, services)


async def filed(state: SocietyState, services: Services) -> dict[str, Any]:
    """Mark the memories the turns used as accessed, then file the round's events for their witnesses together
    with the reflections of the agents whose unreflected importance passed the budget in earlier rounds (one
    idempotent upsert). A model's ratings and reflections write nothing: the game master started them
    (`Memory.prepare`), and this step claims them. Reads only FILING_KEYS."""
    scenario = services.scenario
    events = [MemoryEvent.model_validate(e) for e in state.get("round_events") or []]
    now = Moment.model_validate(state["round_moment"])
    pending = dict(state.get("unreflected") or {})
    due = reflecting(state, scenario)
    with metered() as meter:
        if (ahead := head_start(services)) is not None:
            ahead.prepare(events, due, now)  # under way since the game master's step, unless resumed here
        await services.before_filing()
        await asyncio.to_thread(services.memory.touch, state.get("used_memories") or {}, now)
        reflections = await asyncio.to_thread(services.memory.reflect, due, now)
        gained, filed = await asyncio.to_thread(file_round, services, [*events, *reflections], state)
    for event in reflections:
        emit(Reflected(agent=event.witnesses[0], text=event.text, evidence=event.evidence))
    for agent in due:
        pending[agent] = 0.0
    for agent, importance in gained.items():
        pending[agent] = pending.get(agent, 0.0) + importance
    return filed | {
        "unreflected": {a: round(v, 3) for a, v in pending.items()},
        "round_events": [],
        "used_memories": {},
        "model_use": meter.as_json(),
    }


def file_round(
    services: Services, events: list[MemoryEvent], state: SocietyState
) -> tuple[dict[str, float], dict[str, Any]]:
    """File a round's events and reflections in one write, once the store is checked to hold what the checkpoint
    says; returns the importance each agent gained, and what the store then holds."""
    return file_checked(services.memory, state, "round", lambda: services.memory.remember(events))


def round_samples(state: SocietyState, scenario: Scenario, memo: TurnMemo) -> list[Sample]:
    """The round's turns as samples, in the scenario's agent order. A pure function of the state `record` starts
    from (`memo` only saves building a turn again), so a damaged shard can be rebuilt exactly from the checkpoint's
    history."""
    cycle, round_ = int(state["world"]["cycle"]), int(state["world"]["round"])
    samples = []
    for agent in [a for a in scenario.agent_names if a in state["turns"]]:
        turn = state["turns"][agent]
        context = turn_of(state, agent, state["decided_in"], scenario, memo)
        result = PolicyResult.model_validate(turn["result"])
        samples.append(
            Sample(
                id=Sample.make_id(state["run_id"], cycle, round_, agent, state.get("branch") or ""),
                run=state["run_id"],
                world=scenario.name,
                cycle=cycle,
                round=round_,
                agent=agent,
                path=turn["path"],
                model=turn["model"],
                messages=[*render_messages(context), {"role": "assistant", "content": decision_json(result.decision)}],
                decision=result.decision,
                decided_by=result.decided_by or turn["model"],
                error=result.error,
                flags=result.flags,
                context=context.as_recorded(),
            )
        )
    return samples


def round_chronicle(state: SocietyState, scenario: Scenario) -> RoundRecord:
    """The round as the chronicle keeps it: the world as it shows itself after the round, and what happened."""
    view = scenario.world.view(state["world"])
    events = [MemoryEvent.model_validate(e) for e in state.get("round_events") or []]
    flags = list(state.get("round_flags") or [])
    return RoundRecord(
        cycle=view.cycle, round=view.round, scenario=state["scenario"], world=view, events=events, flags=flags
    )


def write_round(
    services: Services, samples: list[Sample], chronicle: RoundRecord, state: SocietyState
) -> dict[str, Any]:
    """Append the round's samples and its chronicle entry (each exactly once); returns where the next round
    appends, and the digest of each shard's committed lines."""
    payloads: dict[str, bytes] = {}
    offsets = dict(state.get("sample_offsets") or {})
    if services.samples is not None:
        payloads |= services.samples.payloads(samples)
        offsets = services.samples.append(payloads, offsets)
    if services.chronicle is not None:
        written = services.chronicle.payloads(chronicle)
        offsets = services.chronicle.append(written, offsets)
        payloads |= written
    digests = dict(state.get("shard_digests") or {})
    for key, payload in payloads.items():
        digests[key] = fold(digests.get(key, ""), payload)
    return {"sample_offsets": offsets, "shard_digests": digests}


def round_cost(state: SocietyState) -> Counter[str]:
    """How the round's turns went: how many, and how many a stand-in decided, a repair pass saved or the discretion
    guard changed (what the model calls cost is counted by the gateway, in `model_use`)."""
    delta: Counter[str] = Counter()
    for turn in state["turns"].values():
        flags = turn["result"].get("flags") or []
        delta.update(turns=1, fallbacks=int("fallback" in flags), repaired=int("repaired" in flags))
        delta.update({flag: int(flag in flags) for flag in GUARD_FLAGS})
    return delta


async def record(state: SocietyState, runtime: Runtime[SocietySettings]) -> dict[str, Any]:
    """Write each turn of the round as a sample and the round to the chronicle (exactly once), and add up what
    the round cost."""
    services = await aservices_of(state, runtime)
    samples = round_samples(state, services.scenario, services.turns)
    chronicle = round_chronicle(state, services.scenario)
    delta = round_cost(state)
    if services.samples is not None:
        delta["samples_written"] = len(samples)
    committed = await asyncio.to_thread(write_round, services, samples, chronicle, state)
    emit(
        RoundDone(
            cycle=chronicle.cycle,
            round=chronicle.round,
            outcome=chronicle.world.outcome,
            actions={s.agent: s.decision.action for s in samples},
            targets={s.agent: s.decision.target for s in samples},
            view=chronicle.world.model_dump(mode="json"),
            models=calls_so_far(state.get("model_use") or {}),
        )
    )
    # The round is on disk: its turns, what they recalled and the world they decided in leave the checkpoints.
    return committed | {
        "stats": add_stats(state.get("stats"), delta),
        "turns": {},
        "recalled": {},
        "decided_in": {},
    }


def calls_so_far(model_use: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The run's model calls so far by role, in brief, for a live view (summary.json has the full counts)."""
    uses = {role: RoleUse.model_validate(use) for role, use in model_use.items()}
    return {
        role: {"calls": use.calls, "failed": sum(use.failures.values()), "fallbacks": use.fallbacks}
        for role, use in uses.items()
    }


def ended(state: SocietyState, runtime: Runtime[SocietySettings]) -> bool:
    """Whether the world says the cycle is over (an edge's question: the run's services are built by then)."""
    return services_of(state, runtime).scenario.world.outcome(state["world"]) is not None


def next_round(state: SocietyState, runtime: Runtime[SocietySettings]) -> str:
    return END if ended(state, runtime) else "director"


def after_record(state: SocietyState, runtime: Runtime[SocietySettings]) -> str:
    """File the round now if the cycle is over or the scenario files before each round; else behind the next."""
    if ended(state, runtime) or not services_of(state, runtime).scenario.memory.write_behind:
        return "remember"
    return "director"


def build_society_graph() -> StateGraph[Any, SocietySettings, Any, Any]:
    """The uncompiled one-cycle graph; compile it with or without a checkpointer."""
    builder = StateGraph(SocietyState, context_schema=SocietySettings, input_schema=SocietyInput)
    add_cycle_nodes(builder)
    builder.add_edge(START, "genesis")
    builder.add_edge("genesis", "director")
    builder.add_conditional_edges("remember", next_round, ["director", END])
    return builder


def add_cycle_nodes(builder: StateGraph[Any, SocietySettings, Any, Any]) -> None:
    """The round loop's nodes and fixed edges, shared by the society and recurrence graphs."""
    builder.add_node("genesis", genesis)
    builder.add_node("director", director)
    builder.add_node("agent_turn", agent_turn)  # type: ignore[arg-type,call-overload]
    builder.add_node("game_master", game_master)
    builder.add_node("remember", remember)
    builder.add_node("file_behind", file_behind)  # type: ignore[arg-type,call-overload]
    builder.add_node("record", record)
    builder.add_conditional_edges("director", fan_out, ["agent_turn", "file_behind", "game_master"])
    builder.add_edge("agent_turn", "game_master")
    builder.add_edge("file_behind", "game_master")
    builder.add_edge("game_master", "record")
    builder.add_conditional_edges("record", after_record, ["remember", "director"])
