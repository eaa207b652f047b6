"""Amphoreus's rules: all of a round's decisions resolved at once into events and a new state.

Pure and deterministic (a seeded RNG decides chances), so a replayed round resolves identically.
Defences are applied first, then every other action in the spec's heir order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from amphoreus_graph.contracts.actions import ActionSpec
from amphoreus_graph.contracts.ids import event_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind
from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.worlds.amphoreus.schema import AmphoreusSpec
from amphoreus_graph.worlds.amphoreus.state import AmphoreusState, Outcome

ATTACK_HARM = 25.0
TIDE_FIGHT_COST = 8.0


@dataclass
class _Round:
    world: AmphoreusState
    scenario: AmphoreusSpec
    actions: dict[str, ActionSpec]
    rng: random.Random
    decisions: dict[str, Decision]
    tick: int
    shielded: set[str] = field(default_factory=set)
    events: list[MemoryEvent] = field(default_factory=list)

    def log(
        self,
        actor: str,
        decision: Decision,
        what: str,
        *,
        also: tuple[str, ...] = (),
        bump: float = 0,
        public: bool = False,
    ) -> None:
        """Record an event, witnessed by the actor, anyone named and everyone at the actor's location
        (public news is filed once, for every heir to recall)."""
        where = self.world.heirs[actor].location
        text = f"At {where}, {what}"
        if decision.speech:
            text += f' {actor} said: "{decision.speech}"'
        witnesses = list(dict.fromkeys([actor, *also, *self.world.heirs_at(where)]))
        self.events.append(
            MemoryEvent(
                id=event_id(self.world.cycle, self.world.round, actor),
                text=text,
                cycle=self.world.cycle,
                round=self.world.round,
                tick=self.tick,
                witnesses=witnesses,
                public=public,
                importance=min(10.0, self.actions[decision.action].importance + bump),
                kind=MemoryKind.SPEECH if decision.speech else MemoryKind.OBSERVATION,
                action=decision.action,
                tags=list(self.actions[decision.action].tags),
                involved=[actor, *also],
            )
        )


def resolve_round(
    world: AmphoreusState,
    scenario: AmphoreusSpec,
    actions: dict[str, ActionSpec],
    decisions: dict[str, Decision],
    rng: random.Random,
    tick: int,
    round_limit: int,
) -> tuple[AmphoreusState, list[MemoryEvent]]:
    """Apply every decision of a round; returns the new state and the events it produced."""
    state = _Round(
        world=world.model_copy(deep=True), scenario=scenario, actions=actions, rng=rng, decisions=decisions, tick=tick
    )
    order = [h for h in scenario.heir_names if h in decisions]
    state.shielded = {d.target for d in decisions.values() if d.action == "defend" and d.target}
    for heir in order:
        _RESOLVERS[decisions[heir].action](state, heir, decisions[heir])
    w = state.world
    w.black_tide = round(max(0.0, w.black_tide + scenario.black_tide.rise_per_round), 2)
    w.outcome = _outcome(w, scenario, round_limit)
    return w, state.events


def _outcome(world: AmphoreusState, scenario: AmphoreusSpec, round_limit: int) -> Outcome | None:
    ends = scenario.end_conditions
    if ends.era_nova and len(world.delivered) == len(scenario.titans):
        return Outcome.ERA_NOVA
    if ends.black_tide and world.black_tide >= scenario.black_tide.limit:
        return Outcome.BLACK_TIDE
    if ends.all_fallen and all(h.fallen for h in world.heirs.values()):
        return Outcome.ALL_FALLEN
    if world.round >= round_limit:
        return Outcome.ROUND_LIMIT
    return None


def _seek(r: _Round, actor: str, d: Decision) -> None:
    titan = r.scenario.titan(d.target or "")
    me = r.world.heirs[actor]
    on_site = me.location == titan.location
    me.location = titan.location
    if titan.name not in r.world.free_coreflames:
        holder = r.world.holder_of(titan.name) or "the Vortex"
        r.log(actor, d, f"{actor} sought the {titan.coreflame}, but {holder} already has it.")
        return
    chance = 0.35 + 0.1 * me.insight + (0.15 if on_site else 0.0)
    if r.rng.random() < chance:
        r.world.free_coreflames.remove(titan.name)
        me.holding.append(titan.name)
        r.log(actor, d, f"{actor} won the {titan.coreflame} from the Titan {titan.name}.", bump=4)
    else:
        r.log(actor, d, f"{actor} sought the {titan.coreflame} from the Titan {titan.name} and failed.")


def _deliver(r: _Round, actor: str, d: Decision) -> None:
    me = r.world.heirs[actor]
    flames = list(me.holding)
    me.location = r.scenario.vortex
    me.delivered += flames
    me.holding.clear()
    r.world.delivered += flames
    r.world.black_tide = max(0.0, r.world.black_tide - 3.0 * len(flames))
    names = ", ".join(r.scenario.titan(t).coreflame for t in flames) or "nothing"
    r.log(actor, d, f"{actor} delivered {names} to the Vortex of Genesis.", public=bool(flames))


def _attack(r: _Round, actor: str, d: Decision) -> None:
    target = d.target or ""
    victim = r.world.heirs[target]
    harm = ATTACK_HARM / 2 if target in r.shielded else ATTACK_HARM
    victim.health = max(0.0, victim.health - harm)
    r.world.adjust_trust(target, actor, -0.4)
    for bystander in r.world.heirs_at(r.world.heirs[actor].location):
        r.world.adjust_trust(bystander, actor, -0.1)
    r.world.black_tide += 2.0
    what = f"{actor} attacked {target}, dealing {harm:.0f} harm."
    if victim.fallen and victim.holding:
        flame = victim.holding.pop(0)
        r.world.heirs[actor].holding.append(flame)
        what += f" {target} fell, and {actor} took the {r.scenario.titan(flame).coreflame}."
    r.log(actor, d, what, also=(target,))


def _defend(r: _Round, actor: str, d: Decision) -> None:
    if d.target and d.target != actor:
        r.world.adjust_trust(d.target, actor, 0.1)
    r.log(
        actor,
        d,
        f"{actor} stood guard over {'themself' if d.target == actor else d.target}.",
        also=(d.target or actor,),
    )


def _aid(r: _Round, actor: str, d: Decision) -> None:
    target = d.target or ""
    patient = r.world.heirs[target]
    patient.health = min(100.0, patient.health + 20.0)
    r.world.adjust_trust(target, actor, 0.2)
    r.log(actor, d, f"{actor} tended to {target}.", also=(target,))


def _ally(r: _Round, actor: str, d: Decision) -> None:
    target = d.target or ""
    mutual = (other := r.decisions.get(target)) is not None and other.action == "ally" and other.target == actor
    gain = 0.3 if mutual else 0.15
    r.world.adjust_trust(actor, target, gain)
    r.world.adjust_trust(target, actor, gain)
    r.log(
        actor, d, f"{actor} offered an alliance to {target}{' and it was returned' if mutual else ''}.", also=(target,)
    )


def _study(r: _Round, actor: str, d: Decision) -> None:
    r.world.heirs[actor].insight += 1
    r.log(actor, d, f"{actor} studied the lore of the Titans.")


def _remember(r: _Round, actor: str, d: Decision) -> None:
    r.log(actor, d, f"{actor} set down a record of this round so that it would outlast the cycle.")


def _deceive(r: _Round, actor: str, d: Decision) -> None:
    target = d.target or ""
    others = [h for h in r.world.trust[target] if h != actor]
    if others and r.rng.random() < 0.5:
        scapegoat = others[r.rng.randrange(len(others))]
        r.world.adjust_trust(target, scapegoat, -0.2)
        r.log(actor, d, f"{actor} turned {target} against {scapegoat} with a lie.", also=(target,))
    else:
        r.world.adjust_trust(target, actor, -0.3)
        r.log(actor, d, f"{actor} tried to deceive {target} and was found out.", also=(target,))


def _explore(r: _Round, actor: str, d: Decision) -> None:
    r.log(actor, d, f"{actor} set out for {d.target}.")
    r.world.heirs[actor].location = d.target or r.world.heirs[actor].location


def _decree(r: _Round, actor: str, d: Decision) -> None:
    r.world.black_tide = max(0.0, r.world.black_tide - 1.0)
    for listener in r.world.heirs_at(r.world.heirs[actor].location):
        r.world.adjust_trust(listener, actor, -0.05)
    r.log(actor, d, f"{actor} proclaimed a law.")


def _jest(r: _Round, actor: str, d: Decision) -> None:
    for listener in r.world.heirs_at(r.world.heirs[actor].location):
        r.world.adjust_trust(listener, actor, 0.1)
    r.log(actor, d, f"{actor} made everyone nearby laugh.")


def _fight_tide(r: _Round, actor: str, d: Decision) -> None:
    me = r.world.heirs[actor]
    me.health = max(0.0, me.health - TIDE_FIGHT_COST)
    r.world.black_tide = max(0.0, r.world.black_tide - 5.0)
    r.log(actor, d, f"{actor} fought back the Black Tide.")


def _withdraw(r: _Round, actor: str, d: Decision) -> None:
    me = r.world.heirs[actor]
    me.health = min(100.0, me.health + 5.0)
    r.log(actor, d, f"{actor} withdrew from the world for a while.")


_RESOLVERS = {
    "seek_coreflame": _seek,
    "deliver_coreflame": _deliver,
    "attack": _attack,
    "defend": _defend,
    "aid": _aid,
    "ally": _ally,
    "study": _study,
    "remember": _remember,
    "deceive": _deceive,
    "explore": _explore,
    "decree": _decree,
    "jest": _jest,
    "fight_tide": _fight_tide,
    "withdraw": _withdraw,
}
