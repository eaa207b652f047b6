"""A validated reply carried out on a kit round: its events filed as the kit files its own (ids, witnesses, the
actor's speech and action tags), its changes applied in order to the round's working copy of the state.

A change the state does not allow (a number leaving its range, a move with no open way, a fallen agent acting)
stops the whole reply with a precise problem (`MalformedOutput`), which the model is shown once to repair it;
the round's working copy is then thrown away, so a refused reply changes nothing.
"""

from __future__ import annotations

from amphoreus_graph.policy.gateway import MalformedOutput
from amphoreus_graph.worlds.gm.reply import (
    ClockChange,
    EndChange,
    Event,
    Move,
    ObjectiveChange,
    PoolChange,
    Reply,
    StatChange,
    TallyChange,
    TrustChange,
)
from amphoreus_graph.worlds.kit import KitWorld, Status
from amphoreus_graph.worlds.kit.rules import Round
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

    def change(self, change: object) -> str | None:
        """Apply one change; what is wrong with it instead, if anything."""
        if isinstance(change, Move):
            return self.move(change)
        if isinstance(change, StatChange):
            return self.stat(change)
        if isinstance(change, TrustChange):
            return self.trust(change)
        if isinstance(change, ClockChange):
            return self.clock(change)
        if isinstance(change, PoolChange):
            return self.pool(change)
        if isinstance(change, ObjectiveChange):
            return self.objective(change)
        if isinstance(change, TallyChange):
            me = self.work.s.agents[change.agent]
            me.tally = round(me.tally + change.delta, 4)
            return None
        if isinstance(change, EndChange):
            self.work.end(change.ending)
            return None
        raise TypeError(f"not a game master's change: {change!r}")

    def move(self, change: Move) -> str | None:
        agent, to = change.agent, change.to
        here = self.work.where[agent]
        if problem := self._standing(agent):
            return problem
        if agent in self.work.moves:
            return f"{agent} is moved twice; expected one move per agent"
        if here == to:
            return f"{agent} is already at {to}"
        route = self.world.rules.route(self.work.start, here or "", to)
        if route is None:
            return f"no open way leads from {here} to {to}; expected a place reachable by {self._ways(here)}"
        self.work.moves[agent] = (to, route[1])
        return None

    def stat(self, change: StatChange) -> str | None:
        agent, name = change.agent, change.stat
        me = self.work.s.agents[agent]
        if me.fallen:
            return f"{agent} has fallen"
        spec = self.world.spec.stats[name]
        value = me.stats[name] + change.delta
        if problem := _outside(f"{agent}'s {spec.label or name}", value, spec.min, spec.max):
            return problem
        self.work.set_stat(agent, name, value)
        if fell := self.work.settle(agent):
            self.work.file(agent, " ".join(fell), location=self.work.where[agent], involved=[agent], importance=6.0)
        return None

    def trust(self, change: TrustChange) -> str | None:
        agents = self.work.s.agents
        if change.towards == change.agent or change.agent not in agents or change.towards not in agents:
            return f"{change.agent} has no trust in {change.towards} to change; expected another agent"
        value = self.work.s.trust_of(change.agent, change.towards) + change.delta
        if problem := _outside(f"{change.agent}'s trust in {change.towards}", value, -1.0, 1.0):
            return problem
        self.work.s.adjust_trust(change.agent, change.towards, change.delta)
        return None

    def clock(self, change: ClockChange) -> str | None:
        spec, value = self.world.spec.clock, self.work.s.clock
        assert spec is not None and value is not None, "validated: the world has a clock"
        if problem := _outside(f"the {spec.label}", value + change.delta, spec.min, spec.max):
            return problem
        self.work.add_clock(change.delta)
        return None

    def pool(self, change: PoolChange) -> str | None:
        spec = self.world.spec.pools[change.pool]
        value = self.work.s.pools[change.pool] + change.delta
        if problem := _outside(f"the {spec.label or change.pool}", value, spec.min, spec.max):
            return problem
        self.work.add_pool(change.pool, change.delta)
        return None

    def objective(self, change: ObjectiveChange) -> str | None:
        """An objective put in a state its kind has, by someone who could: a holder takes it where it lies (or
        from beside its holder), delivers it where it belongs, lights it where it stands."""
        name, status, holder = change.objective, Status(change.status), change.holder
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
            obj.status, obj.at, obj.by = Status.FREE, change.at or carried_to or obj.at or home, None
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
