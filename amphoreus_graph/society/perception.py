"""What each heir perceives at the start of a round: the director's situation, what it sees, its options.

Builds the TurnContext a policy decides on; the memory query is derived from the same situation.
"""

from __future__ import annotations

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.memory.records import gist
from amphoreus_graph.policy.base import RecalledMemory, TurnContext
from amphoreus_graph.policy.offline import stable_rng
from amphoreus_graph.scenario import Scenario
from amphoreus_graph.society.world import World


def living_heirs(world: World, scenario: Scenario) -> list[str]:
    """Heirs who still act this cycle, in the scenario's order."""
    return [h for h in scenario.heir_names if not world.heirs[h].fallen]


def director_situations(world: World, scenario: Scenario, seed: int, run_id: str) -> dict[str, str]:
    """The director's framing of the round for each heir: one flavour event per location, plus stakes."""
    rng = stable_rng(seed, run_id, world.cycle, world.round, scenario.director)
    templates = scenario.situations or ["Another day passes at {location}."]
    flavour = {
        loc.name: templates[rng.randrange(len(templates))].format(location=loc.name) for loc in scenario.locations
    }
    stakes = (
        f"{scenario.director} watches over the Flame-Chase: {len(world.delivered)} of "
        f"{len(scenario.titans)} Coreflames delivered, {len(world.free_coreflames)} still held by Titans."
    )
    return {h: f"{flavour[world.heirs[h].location]} {stakes}" for h in living_heirs(world, scenario)}


def memory_query(heir: str, world: World, scenario: Scenario, situation: str) -> str:
    """What a heir's recall looks for: the situation, its quest, and where it stands."""
    seeks = scenario.titan(scenario.heir(heir).seeks)
    return f"{gist(situation)}. {heir} seeks the {seeks.coreflame} of {seeks.name} at {world.heirs[heir].location}."


def options_for(heir: str, world: World, scenario: Scenario) -> dict[Action, list[str]]:
    """Every action the heir may take now, with its valid targets (empty list: no target)."""
    others = [h for h in living_heirs(world, scenario) if h != heir]
    here = world.heirs[heir].location
    targets: dict[TargetKind, list[str]] = {
        TargetKind.NONE: [],
        TargetKind.HEIR: others,
        TargetKind.TITAN: list(world.free_coreflames),
        TargetKind.LOCATION: [loc.name for loc in scenario.locations if loc.name != here],
    }
    options: dict[Action, list[str]] = {}
    for action, kind in ACTION_TARGETS.items():
        allowed = [heir, *others] if action is Action.DEFEND else targets[kind]
        if kind is not TargetKind.NONE and not allowed:
            continue
        if action is Action.DELIVER_COREFLAME and not world.heirs[heir].holding:
            continue
        options[action] = allowed
    return options


def observations_for(heir: str, world: World, scenario: Scenario) -> list[str]:
    """Public facts a heir can see: who is nearby, who holds what, who has fallen."""
    me = world.heirs[heir]
    nearby = [h for h in world.heirs_at(me.location) if h != heir]
    seen = [f"Present at {me.location}: {', '.join(nearby) if nearby else 'nobody else'}."]
    for other in scenario.heir_names:
        state = world.heirs[other]
        if other != heir and state.holding:
            flames = ", ".join(scenario.titan(t).coreflame for t in state.holding)
            seen.append(f"{other} carries {flames}.")
        if other != heir and state.fallen:
            seen.append(f"{other} has fallen.")
    return seen


def build_turn(
    heir: str,
    world: World,
    scenario: Scenario,
    *,
    situation: str,
    memories: list[RecalledMemory],
    seed: int,
    run_id: str,
) -> TurnContext:
    profile = scenario.heir(heir)
    me = world.heirs[heir]
    return TurnContext(
        run_id=run_id,
        seed=seed,
        cycle=world.cycle,
        round=world.round,
        heir=heir,
        title=profile.title,
        persona=profile.persona,
        traits=profile.traits,
        path=profile.path,
        secondary_path=profile.secondary_path,
        seeks=profile.seeks,
        location=me.location,
        health=me.health,
        holding=list(me.holding),
        black_tide=world.black_tide,
        situation=situation,
        observations=observations_for(heir, world, scenario),
        memories=memories,
        options=options_for(heir, world, scenario),
        trust=dict(world.trust[heir]),
    )
