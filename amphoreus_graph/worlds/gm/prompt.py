"""What the game master's model is asked: the world in prose, what its own rules do after the model's changes,
the state as the world shows it, every decision of the round, and the reply's shape with the names it may use.

The state, the decisions and the names travel as one-line JSON after a label (`STATE: {...}`), which models read
reliably and the scripted stand-in (models/fake.py) parses; the marker line opens every request.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.contracts.world import WorldState
from amphoreus_graph.worlds.gm.config import GameMasterConfig
from amphoreus_graph.worlds.gm.reply import Vocabulary
from amphoreus_graph.worlds.kit import KitWorld
from amphoreus_graph.worlds.kit.state import KitState
from amphoreus_graph.worlds.kit.texts import fmt, num

MARKER = "Resolve this round as the game master."

SYSTEM = (
    "You are the game master of a world that a society of agents lives in. Each round every agent chooses an "
    "action; you decide what actually happens, fairly and in keeping with the world as its prose tells it, and "
    "you change the world's state only through the typed changes you are given. You answer with one JSON object "
    "and nothing else."
)

ANSWER = """Reply with one JSON object and nothing else: {{"events": [...], "changes": [...]}}

"events": what happened this round, in order. First one event for each decision, with that agent as its actor;
then anything else the world does (actor null). Each event:
  {{"actor": an agent or null, "text": one or two sentences, "involved": [other agents it touched],
   "public": true if everyone comes to know of it, "importance": 1 (trivial) to 10 (momentous)}}
Those who witness an event: its actor, those involved, and everyone where the actor stands.

"changes": what the round changed, applied in order; after each change every number must lie in its range.
Each change is one of:
  {{"type": "move", "agent": A, "to": L}}  sets out along the open ways; the journey takes the route's rounds
  {{"type": "stat", "agent": A, "stat": S, "delta": number}}
  {{"type": "trust", "agent": A, "towards": B, "delta": number}}  how far A trusts B, within [-1, 1]
  {{"type": "clock", "delta": number}}
  {{"type": "pool", "pool": P, "delta": number}}
  {{"type": "objective", "objective": O, "status": one of its "may_become",
   "holder": A (held: who carries it; lit or delivered: who did it), "at": L (free only: where it lies)}}
  {{"type": "tally", "agent": A, "delta": number}}  {score}{more}
  {{"type": "end", "ending": E}}  ends the cycle after this round
At most {max_events} events and {max_changes} changes. Change nothing the round did not change.
NAMES: {names}"""


def messages(
    world: KitWorld,
    config: GameMasterConfig,
    vocabulary: Vocabulary,
    state: WorldState,
    decisions: dict[str, Decision],
    round_limit: int,
) -> list[BaseMessage]:
    """The request for one round."""
    kit = KitState.model_validate(state)
    labels = world.labels
    lines = [
        MARKER,
        "",
        f"{world.title}. {world.description}".strip(),
        f"You speak as {labels.director}. Its {labels.agents} are: {', '.join(world.rules.agents)}.",
        "",
        "THE WORLD, IN PROSE",
        config.prose,
        "",
        "WHAT THE WORLD'S OWN RULES DO AFTER YOUR CHANGES (do not do it twice)",
        *[f"- {rule}" for rule in standing_rules(world, round_limit)],
        "",
        f"THE STATE NOW (cycle {kit.cycle}, round {kit.round} of {round_limit})",
        "STATE: " + _json(state_now(world, vocabulary, kit)),
        "",
        'THE DECISIONS THIS ROUND ("refused": why the rules would not allow it as it stands)',
        "DECISIONS: " + _json(decisions_now(world, state, decisions)),
        "",
        "YOUR ANSWER",
        ANSWER.format(
            score=f"adds to the agent's {labels.score}",
            more=_more_changes(vocabulary),
            max_events=vocabulary.max_events,
            max_changes=vocabulary.max_changes,
            names=_json(names(vocabulary)),
        ),
    ]
    return [SystemMessage(SYSTEM), HumanMessage("\n".join(lines))]


def repair(problem: str) -> HumanMessage:
    """The one repair pass: the reply's problem, and what to do about it."""
    return HumanMessage(
        f"That answer cannot be used: {problem}. Reply again with the whole corrected JSON object and nothing else."
    )


def standing_rules(world: KitWorld, round_limit: int) -> list[str]:
    """What the kit does at every round's end, in words, so the model neither repeats nor fights it. Texts show
    what is fixed (ranges, a threshold's own value) and '…' for what will only be known when they are said."""
    spec, rules = world.spec, world.rules
    values = texts_at(world, round_limit)
    found = [
        "Journeys: an agent you move arrives at the round's end along a one-round way; a longer way keeps it on "
        "the road for the rounds the route takes."
    ]
    for name, pool in spec.pools.items():
        if pool.regrowth is not None:
            growth = pool.regrowth
            label = pool.label or name
            found.append(f"Regrowth of the {label} after every round: {growth.kind}, rate {num(growth.rate)}.")
    clock = spec.clock
    for label, rise in [(clock.label, clock.rise_per_round)] if clock is not None else []:
        if rise:
            found.append(f"The {label} changes by {_said(rise)} after every round.")
    for name, named in spec.clocks.items():
        if named.rise_per_round:
            found.append(f"The {rules.gauge_label(name)} changes by {_said(named.rise_per_round)} after every round.")
    for ref in rules.thresholds:
        gauge = rules.gauge_label(ref.gauge)
        crossing = "reaches" if ref.spec.direction == "up" else "falls to"
        outcome = f" The cycle then ends ({ref.spec.end})." if ref.spec.end else ""
        text = fmt(ref.spec.text, values | {ref.gauge: ref.spec.at}) or "(no message)"
        found.append(f"When the {gauge} {crossing} {num(ref.spec.at)}: {text}{outcome}")
    if rules.vital is not None:
        vital = spec.stats[rules.vital]
        found.append(
            f"An agent whose {vital.label or rules.vital} reaches {num(vital.min)} falls; what it carries is dropped."
        )
    for ending in spec.endings:
        when = ending.when.model_dump(exclude_defaults=True, mode="json") if ending.when else None
        condition = f"when {_json(when)}" if when else "only when a threshold or your end change says so"
        found.append(f"Ending {ending.id!r}, {condition}: {fmt(ending.text, values)}")
    return found


def texts_at(world: KitWorld, round_limit: int) -> dict[str, Any]:
    """A template's placeholders before the moment it is said: the world's fixed numbers, '…' for the rest."""
    spec = world.spec
    fixed: dict[str, Any] = {"total": len(world.rules.objectives), "rounds": round_limit}
    if spec.clock is not None:
        fixed |= {"clock_min": spec.clock.min, "clock_max": spec.clock.max}
    fixed |= {f"{name}_max": pool.max for name, pool in spec.pools.items()}
    return dict.fromkeys(world.rules.stakes_names() | {"outcome"}, "…") | fixed


def state_now(world: KitWorld, vocabulary: Vocabulary, state: KitState) -> dict[str, Any]:
    """The state as the world shows it, with every range a change must keep to."""
    spec, rules = world.spec, world.rules
    agents: dict[str, Any] = {}
    for name, agent in state.agents.items():
        shown: dict[str, Any] = {"at": agent.at}
        if agent.at is None:
            shown = {"en_route_to": agent.to, "arrives_after_round": agent.arrives}
        if agent.fallen:
            shown["fallen"] = True
        shown["stats"] = agent.stats
        if rules.carried:
            shown["holding"] = state.held_by(name)
        shown["tally"] = agent.tally
        shown["trust"] = state.trust_row(name)
        if held := {r: row[name] for r, row in state.relations.items() if name in row}:
            shown["relations"] = held
        agents[name] = shown
    found: dict[str, Any] = {
        "agents": agents,
        "stats": {
            name: {"label": stat.label or name, "min": stat.min, "max": stat.max, "vital": stat.vital}
            for name, stat in spec.stats.items()
        },
        "objectives": {
            name: {
                "kind": rules.kind_of[name],
                "status": obj.status.value,
                "said": rules.word(name, obj.status),
                "at": obj.at,
                "holder": obj.by,
                "may_become": vocabulary.allowed(name),
            }
            for name, obj in state.objectives.items()
        },
        "ways": ways(world, state),
    }
    if spec.clock is not None and state.clock is not None:
        found["clock"] = {"label": spec.clock.label, "value": state.clock, "min": spec.clock.min, "max": spec.clock.max}
    if spec.clocks:
        found["clocks"] = {
            name: {"label": rules.gauge_label(name), "value": state.clocks[name], "min": c.min, "max": c.max}
            for name, c in spec.clocks.items()
        }
    if spec.relations:
        found["relations"] = {name: {"min": r.min, "max": r.max} for name, r in spec.relations.items()}
    if spec.pools:
        found["pools"] = {
            name: {"label": pool.label or name, "value": state.pools[name], "min": pool.min, "max": pool.max}
            for name, pool in spec.pools.items()
        }
    return found


def ways(world: KitWorld, state: KitState) -> list[str]:
    """The open ways between places now, with their rounds."""
    if world.rules.complete:
        return ["every place is one round from every other"]
    edges = world.rules.open_edges(state)
    found = []
    for (a, b), time in edges.items():
        if (b, a) in edges and b < a:
            continue  # a two-way edge is said once
        arrow = "<->" if (b, a) in edges else "->"
        found.append(f"{a} {arrow} {b}: {time} round{'s' if time > 1 else ''}")
    return found


def decisions_now(world: KitWorld, state: WorldState, decisions: dict[str, Decision]) -> list[dict[str, Any]]:
    """Every decision in the world's agent order, with what the action means and whether the rules allow it."""
    found = []
    for agent in [a for a in world.rules.agents if a in decisions]:
        decision = decisions[agent]
        decl = world.rules.actions.get(decision.action)
        found.append(
            {
                "agent": agent,
                "action": decision.action,
                "means": decl.help if decl else "",
                "target": decision.target,
                "target_kind": decl.target.value if decl else None,
                "speech": decision.speech,
                "refused": world.problem(state, agent, decision),
            }
        )
    return found


def names(vocabulary: Vocabulary) -> dict[str, Any]:
    found: dict[str, Any] = {
        "agents": vocabulary.agents,
        "locations": vocabulary.locations,
        "objectives": list(vocabulary.statuses),
        "stats": vocabulary.stats,
    }
    if vocabulary.pools:
        found["pools"] = vocabulary.pools
    if vocabulary.clocks:
        found["clocks"] = vocabulary.clocks
    if vocabulary.relations:
        found["relations"] = vocabulary.relations
    found["endings"] = vocabulary.endings
    return found


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _said(amount: float | str) -> str:
    """A declared amount as the game master reads it: a number, or its expression as written."""
    return num(amount) if isinstance(amount, int | float) else f"({amount})"


def _more_changes(vocabulary: Vocabulary) -> str:
    """The change types only some worlds have (relations, named clocks), listed only where the world has them."""
    more = ""
    if vocabulary.relations:
        more += '\n  {"type": "relation", "relation": R, "agent": A, "towards": B, "delta": number}  A\'s R towards B'
    if vocabulary.clocks:
        more += '\n  {"type": "clock", "name": C, "delta": number}  a named clock'
    return more
