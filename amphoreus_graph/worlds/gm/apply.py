"""A validated reply carried out on a kit round: its events filed as the kit files its own (ids, witnesses, the
actor's speech and action tags), its changes applied in order to the round's working copy of the state.

A change the state does not allow (a number leaving its range, a move with no open way, a fallen agent acting)
stops the whole reply with a precise problem (`MalformedOutput`), which the model is shown once to repair it;
the round's working copy is then thrown away, so a refused reply changes nothing.
"""

from __future__ import annotations

from amphoreus_graph.models.gateway import MalformedOutput
from amphoreus_graph.worlds.gm.reply import Change, Event, Reply
from amphoreus_graph.worlds.kit import KitWorld, Status, effects
from amphoreus_graph.worlds.kit.compiled import CLOCK
from amphoreus_graph.worlds.kit.effects import EffectRule
from amphoreus_graph.worlds.kit.rules import Round
from amphoreus_graph.worlds.kit.scope import TRUST
from amphoreus_graph.worlds.kit.texts import num

TOLERANCE = 1e-9  # a sum of decimal deltas may land a hair outside a range it meets exactly


class Applier:
    """One reply carried out on one round's working copy (`work.s`)."""

    def __init__(self, world: KitWorld, work: Round) -> None:
        self.world = world
        self.work = work
        self.told: set[str] = set()  # agents whose decision has an event (its speech goes with the first)

    def carry_out(self, reply: Reply) -> None:
        for event in reply.events:
            self.tell(event)
        for agent, decision in self.work.decisions.items():
            if agent not in self.told:  # every decision is remembered (and its speech heard), told or not
                self.tell(
                    Event.model_construct(actor=agent, text=f"{agent} chose to {decision.action.replace('_', ' ')}.")
                )
        for i, change in enumerate(reply.changes):
            problem = self.change(change)
            if problem is not None:
                raise MalformedOutput(f"changes.{i} ({change.type}): {problem}")

    # ---------------------------------------------------------------------------------------------- events

    def tell(self, event: Event) -> None:
        """File an event as the kit files an action's: at the actor's place, its first event carrying the
        decision (speech and action), every one tagged with the actor's action's tags."""
        actor = event.actor
        decision = self.work.decisions.get(actor) if actor else None
        decl = self.world.rules.actions.get(decision.action) if decision else None
        first = actor is not None and actor not in self.told
        self.work.file(
            actor or "",
            event.text,
            location=self.work.where.get(actor) if actor else None,
            involved=[actor, *event.involved] if actor else list(event.involved),
            public=event.public,
            importance=event.importance,
            decision=decision if first else None,
            tags=list(decl.tags) if decl else [],
        )
        if actor is not None:
            self.told.add(actor)

    # --------------------------------------------------------------------------------------------- changes

    def change(self, change: Change) -> str | None:
        """Apply one change (each change applies itself through the methods below); what is wrong with it
        instead, if anything."""
        return change.apply(self)

    def carry(self, actor: str, effect: EffectRule, target: str | None = None) -> list[str]:
        """Carry out a kit effect as if `actor` did it (aimed at `target`): the game master's changes do what
        the kit's effects do, once checked against the state; what it narrated (a fall) is returned."""
        ctx = self.work.world_ctx()
        ctx.actor, ctx.target, ctx.location = actor, target, self.work.where.get(actor) or ""
        effect.apply(self.work, ctx)
        return ctx.sentences

    def move(self, agent: str, to: str) -> str | None:
        here = self.work.where[agent]
        if problem := self._standing(agent):
            return problem
        if agent in self.work.moves:
            return f"{agent} is moved twice; expected one move per agent"
        if here == to:
            return f"{agent} is already at {to}"
        if self.world.rules.route(self.work.start, here or "", to) is None:
            return f"no open way leads from {here} to {to}; expected a place reachable by {self._ways(here)}"
        self.carry(agent, effects.Move(move=effects.MoveArgs(to=to)))
        return None

    def stat(self, agent: str, name: str, delta: float) -> str | None:
        me = self.work.s.agents[agent]
        if me.fallen:
            return f"{agent} has fallen"
        spec = self.world.spec.stats[name]
        if problem := _outside(f"{agent}'s {spec.label or name}", me.stats[name] + delta, spec.min, spec.max):
            return problem
        if fell := self.carry(agent, effects.StatChange(stat=effects.StatArgs(name=name, delta=delta))):
            self.work.file(agent, " ".join(fell), location=self.work.where[agent], involved=[agent], importance=6.0)
        return None

    def relation(self, relation: str, agent: str, towards: str, delta: float) -> str | None:
        """How far `agent` stands to `towards` in a relation (trust: how far it trusts them)."""
        agents = self.work.s.agents
        said = "trust in" if relation == TRUST else f"{relation} towards"
        if towards == agent or agent not in agents or towards not in agents:
            return f"{agent} has no {said} {towards} to change; expected another agent"
        if relation == TRUST:
            low, high, value = -1.0, 1.0, self.work.s.trust_of(agent, towards)
        else:
            declared = self.world.spec.relations[relation]
            low, high, value = declared.min, declared.max, self.work.s.relation_of(relation, agent, towards)
        if problem := _outside(f"{agent}'s {said} {towards}", value + delta, low, high):
            return problem
        self.carry(agent, effects.RelationChange(relation=effects.RelationArgs(name=relation, delta=delta)), towards)
        return None

    def clock(self, name: str | None, delta: float) -> str | None:
        spec = self.world.spec.clock if name is None else self.world.spec.clocks[name]
        value = self.work.s.clock if name is None else self.work.s.clocks[name]
        assert spec is not None and value is not None, "validated: the world has this clock"
        if problem := _outside(f"the {self.world.rules.gauge_label(name or CLOCK)}", value + delta, spec.min, spec.max):
            return problem
        self.carry("", effects.ClockChange(clock=effects.ClockArgs(name=name, delta=delta)))
        return None

    def pool(self, name: str, delta: float) -> str | None:
        spec = self.world.spec.pools[name]
        if problem := _outside(f"the {spec.label or name}", self.work.s.pools[name] + delta, spec.min, spec.max):
            return problem
        self.carry("", effects.PoolChange(pool=effects.PoolArgs(name=name, delta=delta)))
        return None

    def tally(self, agent: str, delta: float) -> str | None:
        self.carry(agent, effects.TallyChange(tally=effects.TallyArgs(delta=delta)))
        return None

    def end(self, ending: str) -> str | None:
        self.carry("", effects.End(end=effects.EndArgs(outcome=ending)))
        return None

    def objective(self, name: str, status: Status, holder: str | None, at: str | None) -> str | None:
        """An objective put in a state its kind has, by someone who could: a holder takes it where it lies (or
        from beside its holder), delivers it where it belongs, lights it where it stands. (No kit effect sets a
        state outright: this one is the game master's own.)"""
        obj = self.work.s.objectives[name]
        if obj.status is Status.LOST:
            return f"the {name} is lost for the rest of the cycle"
        if holder is not None and (problem := self._standing(holder)):
            return problem
        there = self.work.where[holder] if holder else None
        if status is Status.HELD:
            lies = self.work.where.get(obj.by) if obj.status is Status.HELD and obj.by else obj.at
            if there != lies:
                return f"the {name} is at {lies or 'no place'} and {holder} is at {there}"
            obj.status, obj.at, obj.by = Status.HELD, None, holder
        elif status is Status.DELIVERED:
            if not (obj.status is Status.HELD and obj.by == holder):
                return f"{holder} does not carry the {name}; expected a held objective delivered by its holder"
            places = self.world.rules.kind(name).deliver_to
            if places and there not in places:
                return f"the {name} belongs at {', '.join(places)} and {holder} is at {there}"
            obj.status, obj.at, obj.by = Status.DELIVERED, there, holder
        elif status is Status.LIT:
            if holder is not None and there != obj.at:
                return f"the {name} stands at {obj.at} and {holder} is at {there}"
            obj.status, obj.by = Status.LIT, holder
        elif status is Status.DOUSED:
            if obj.status is not Status.LIT:
                return f"the {name} is {self.world.rules.word(name, obj.status)}, not lit; only a lit one is put out"
            obj.status, obj.by = Status.DOUSED, None
        elif status is Status.FREE:
            carried_to = self.work.where.get(obj.by) if obj.status is Status.HELD and obj.by else None
            home = self.world.rules.objectives[name].location
            obj.status, obj.at, obj.by = Status.FREE, at or carried_to or obj.at or home, None
        else:
            obj.status, obj.at, obj.by = Status.LOST, None, None
        return None

    # --------------------------------------------------------------------------------------------- helpers

    def _standing(self, agent: str) -> str | None:
        """Why an agent cannot act or be acted on in place now (fallen, or on the road), if it cannot."""
        me = self.work.s.agents[agent]
        if me.fallen:
            return f"{agent} has fallen"
        if self.work.where[agent] is None:
            return f"{agent} is on the road to {me.to}"
        return None

    def _ways(self, here: str | None) -> str:
        near = self.world.rules.neighbours(self.work.start, here)
        return f"the open ways from {here} ({', '.join(near) or 'none'})"


def _outside(what: str, value: float, low: float, high: float) -> str | None:
    if low - TOLERANCE <= value <= high + TOLERANCE:
        return None
    return f"{what} would be {num(value)}, outside its range [{num(low)}, {num(high)}]"
