"""A kit world's round: every decision resolved at once into events and a new state.

Order (docs/worlds-kit.md, "A round"): decisions are checked against what was offered at the round's start
(one that was not is rejected with an event, nothing else); shields and contested claims are settled first;
then each agent's action in the world's agent order (costs, then effects, then its resolver); then journeys
(arrivals, departures); then pools regrow, the clock rises, thresholds fire, and endings are checked.

Pure given the rng: the input state is validated into a fresh model and never changed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from amphoreus_graph.contracts import ids
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.worlds.kit import social
from amphoreus_graph.worlds.kit.compiled import Compiled
from amphoreus_graph.worlds.kit.effects import Effect
from amphoreus_graph.worlds.kit.schema import ActionDecl, DirectorEvent, RoundRule, Trigger
from amphoreus_graph.worlds.kit.scope import TRUST, Scope
from amphoreus_graph.worlds.kit.sight import in_order, watchers
from amphoreus_graph.worlds.kit.state import KitState
from amphoreus_graph.worlds.kit.terms import Status, Transition, Who
from amphoreus_graph.worlds.kit.texts import fmt, num

DEFAULT_TEXT: dict[Transition, str] = {
    Transition.SOUGHT: "{actor} sought the {objective} but did not win it.",
    Transition.CLAIMED: "{actor} claimed the {objective}.",
    Transition.LIT: "{actor} claimed the {objective} where it stands.",
    Transition.RELIT: "{actor} claimed the {objective} again.",
    Transition.CONTESTED: "{actor} contested the {objective} with {rivals}; {winner} prevailed.",
    Transition.DELIVERED: "{actor} delivered the {objective} to {location}.",
    Transition.DOUSED: "{actor} undid the {objective}.",
    Transition.LOST: "The {objective} was lost.",
    Transition.TAKEN: "{actor} took the {objective} from {target}.",
    Transition.DROPPED: "{target} dropped the {objective} at {location}.",
}
PUBLIC_BY_DEFAULT = {Transition.DELIVERED}


@dataclass
class _Ctx:
    """One action being carried out: who, at whom, and the event it is composing."""

    actor: str
    decision: Decision
    decl: ActionDecl
    target: str | None  # the target agent, if any
    objective: str | None  # the target objective, if any
    location: str  # where the actor stood when the round began
    values: dict[str, Any] = field(default_factory=dict)
    lead: str | None = None  # the action's text, or a chance branch's
    sentences: list[str] = field(default_factory=list)
    involved: list[str] = field(default_factory=list)
    bump: float = 0.0
    public: bool = False
    computed: dict[str, float] = field(default_factory=dict)  # the current effect list's expressions, by text


class Round:
    """The mutable working copy of one round (resolvers see it through `Act`)."""

    def __init__(
        self, world: Compiled, state: KitState, decisions: dict[str, Decision], rng: random.Random, now: Moment
    ) -> None:
        self.w = world
        self.start = state.seal()  # only read: what the round began with (its copy `s` is what changes)
        self.s = state.model_copy(deep=True)
        self.decisions = decisions
        self.rng = rng
        self.now = now
        self.events: list[MemoryEvent] = []
        self.counts: dict[str, int] = {}
        self.shields: dict[str, float] = {}
        self.claimants: dict[str, list[str]] = {}  # objective -> who claims it this round, in agent order
        self.contests: dict[str, tuple[str | None, list[str]]] = {}
        self.moves: dict[str, tuple[str, int]] = {}
        self.where = {name: a.at for name, a in state.agents.items()}  # positions while the round resolves
        self.valid: dict[str, Decision] = {}

    # --------------------------------------------------------------------------------------------- events

    def event_id(self, owner: str) -> str:
        """The next id of an event the owner (an agent, or "" the world) files this round (contracts/ids.py)."""
        n = self.counts.get(owner, 0) + 1
        self.counts[owner] = n
        return ids.event_id(self.s.cycle, self.s.round, owner, n)

    def here(self, location: str | None) -> list[str]:
        """Standing agents at a place as the round began (those en route see nothing)."""
        return self.start.present(location) if location else []

    def audience(self, actor: str, location: str | None) -> list[str]:
        """Who sees what an agent (or the world, "") does at a place as the round began: everyone there, or in a
        world that bounds sight those who notice the actor (sight.py), the actor among them if it stands there."""
        if self.w.spec.sight is None or not location or actor not in self.start.agents:
            return self.here(location)
        seen = watchers(self.start, actor, location, self.w.spec.sight)
        return in_order(self.start, [*seen, actor]) if self.start.agents[actor].at == location else seen

    def file(
        self,
        owner: str,
        text: str,
        *,
        location: str | None,
        involved: list[str],
        public: bool = False,
        importance: float = 3.0,
        decision: Decision | None = None,
        tags: list[str] | None = None,
        event_id: str | None = None,
        secret: bool = False,
    ) -> MemoryEvent:
        body = f"At {location}, {text}" if location else text
        if decision is not None and decision.speech:
            body += f' {owner} said: "{decision.speech}"'
        private = secret or (location in self.w.location and self.w.location[location or ""].private)
        witnesses = list(dict.fromkeys([*involved, *([] if private else self.audience(owner, location))]))
        if public and not witnesses:
            witnesses = self.s.standing()
        event = MemoryEvent(
            id=event_id or self.event_id(owner),
            text=body,
            cycle=self.s.cycle,
            round=self.s.round,
            tick=self.now.tick,
            witnesses=witnesses,
            public=public,
            importance=max(1.0, min(10.0, importance)),
            kind=MemoryKind.SPEECH if decision is not None and decision.speech else MemoryKind.OBSERVATION,
            action=decision.action if decision is not None else None,
            tags=list(tags or []),
            involved=list(dict.fromkeys(involved)),
        )
        self.events.append(event)
        return event

    # ------------------------------------------------------------------------------------------- numbers

    def set_stat(self, agent: str, stat: str, value: float) -> float:
        """Set a stat within its range; returns the change made. An agent whose vital stat reaches its min
        falls (see `fall`)."""
        spec = self.w.spec.stats[stat]
        me = self.s.agents[agent]
        old = me.stats[stat]
        me.stats[stat] = round(max(spec.min, min(spec.max, value)), 4)
        return me.stats[stat] - old

    def add_pool(self, pool: str, delta: float) -> float:
        spec = self.w.spec.pools[pool]
        old = self.s.pools[pool]
        self.s.pools[pool] = round(max(spec.min, min(spec.max, old + delta)), 4)
        return self.s.pools[pool] - old

    def add_clock(self, delta: float, name: str | None = None) -> float:
        """Move the world's clock (or a named one) within its range; returns the change made."""
        if name is not None:
            spec, old = self.w.spec.clocks[name], self.s.clocks[name]
            self.s.clocks[name] = round(max(spec.min, min(spec.max, old + delta)), 4)
            return self.s.clocks[name] - old
        clock = self.w.spec.clock
        if clock is None or self.s.clock is None or not delta:
            return 0.0
        old = self.s.clock
        self.s.clock = round(max(clock.min, min(clock.max, old + delta)), 4)
        return self.s.clock - old

    def add_relation(self, name: str, holder: str, other: str, delta: float) -> float:
        """Change how far `holder` stands to `other` within the relation's range (trust: within [-1, 1]);
        nobody's relation to themself. Returns the change made."""
        if holder == other or holder not in self.s.agents or other not in self.s.agents:
            return 0.0
        if name == TRUST:
            old = self.s.trust_of(holder, other)
            self.s.adjust_trust(holder, other, delta)
            return self.s.trust_of(holder, other) - old
        spec = self.w.spec.relations[name]
        old = self.s.relation_of(name, holder, other)
        self.s.set_relation(name, holder, other, round(max(spec.min, min(spec.max, old + delta)), 4))
        return self.s.relation_of(name, holder, other) - old

    def scope(self, ctx: _Ctx) -> Scope:
        """What an effect's expressions read: the state as it is now, the action's actor and target bound."""
        return Scope(self.w.spec, self.s, actor=ctx.actor or None, target=ctx.target, place=ctx.location or None)

    def amount(self, ctx: _Ctx, value: float | str) -> float:
        if isinstance(value, str) and value in ctx.computed:
            return ctx.computed[value]
        return self.w.amount(value, self.scope(ctx))

    def end(self, outcome: str) -> None:
        if self.s.outcome is None:
            self.s.outcome = outcome

    # ------------------------------------------------------------------------------------------ the round

    def run(self, round_limit: int) -> None:
        self.s.limit = round_limit
        order = [n for n in self.w.agents if n in self.decisions]
        for name in order:
            me = self.start.agents[name]
            if me.fallen or me.en_route:
                continue
            problem = why_not(self.w, self.start, name, self.decisions[name])
            if problem is None:
                self.valid[name] = self.decisions[name]
            else:
                decision = self.decisions[name]
                self.file(
                    name,
                    f"{name} could not {decision.action.replace('_', ' ')}: {problem}.",
                    location=me.at,
                    involved=[name],
                    importance=1.0,
                    decision=decision,
                )
        self._prepare()
        for name, decision in self.valid.items():
            self._act(name, decision)
        self.finish(round_limit)

    def finish(self, round_limit: int) -> None:
        """What ends every round, however its actions were resolved (by the kit, or by a game master that
        changed `s` itself): journeys, regrowth, the clock's rise, thresholds firing, endings."""
        self.s.limit = round_limit
        self._journeys()
        for rule in self.w.spec.every_round:
            self._round_rule(rule)
        social.close_motions(self)
        self._regrow()
        world = self.world_ctx()
        if self.w.spec.clock is not None:
            self.add_clock(self.amount(world, self.w.spec.clock.rise_per_round))
        for name, clock in self.w.spec.clocks.items():
            self.add_clock(self.amount(world, clock.rise_per_round), name)
        self._thresholds()
        for i, trigger in enumerate(self.w.spec.triggers):
            self._trigger(trigger.id or f"trigger{i}", trigger)
        if self.s.outcome is None:
            self.s.outcome = self._ending(round_limit)
        social.tidy(self)

    def _prepare(self) -> None:
        """Before any action is carried out: shields are raised and claims gathered (effects' `prepare`), then
        each objective claimed by several is contested by its kind's rule."""
        for name, decision in self.valid.items():
            for effect in self.w.actions[decision.action].effects:
                effect.prepare(self, name, decision)
        for objective in self.w.objectives:
            rivals = self.claimants.get(objective, [])
            if len(rivals) < 2:
                continue
            kind = self.w.kind(objective)
            winner: str | None
            if kind.contest == "nobody":
                winner = None
            elif kind.contest == "first":
                winner = rivals[0]
            elif kind.contest == "highest_stat":
                stat = kind.contest_stat or ""
                best = max(self.s.agents[r].stats[stat] for r in rivals)
                top = [r for r in rivals if self.s.agents[r].stats[stat] == best]
                winner = top[0] if len(top) == 1 else top[self.rng.randrange(len(top))]
            else:
                winner = rivals[self.rng.randrange(len(rivals))]
            self.contests[objective] = (winner, rivals)

    def _act(self, name: str, decision: Decision) -> None:
        decl = self.w.actions[decision.action]
        target = decision.target
        ctx = _Ctx(
            actor=name,
            decision=decision,
            decl=decl,
            target=target if decl.target is TargetKind.AGENT else None,
            objective=target if decl.target is TargetKind.OBJECTIVE else None,
            location=self.where[name] or "",
            lead=decl.text,
            involved=[name],
            public=decl.public,
        )
        if ctx.target:
            ctx.involved.append(ctx.target)
        event_id = self.event_id(name)  # the action's own event comes first, whatever its resolver files
        slot = len(self.events)
        ctx.values = {
            "actor": name,
            "target": "themself" if target == name else target or "",
            "location": ctx.location,
            "objective": ctx.objective or "",
            "noun": self.w.noun(ctx.objective) if ctx.objective else "",
        }
        for stat, amount in self.w.costs(self.start, decl.name).items():
            self.set_stat(name, stat, self.s.agents[name].stats[stat] - amount)
            self.maybe_fall(ctx, name, None)
        if decl.name in (self.w.spec.clock.on_action if self.w.spec.clock else {}):
            assert self.w.spec.clock is not None
            self.add_clock(self.w.spec.clock.on_action[decl.name])
        self.run_effects(ctx, decl.effects)
        resolver = self.w.resolvers.get(decl.name)
        if resolver is not None:
            from amphoreus_graph.worlds.kit.act import Act

            resolver(Act(self, ctx))
        lead = fmt(ctx.lead, ctx.values | self.w.stakes_vars(self.s, ctx.lead)) if ctx.lead else None
        if lead is None and not ctx.sentences:
            lead = f"{name} chose to {decl.name.replace('_', ' ')}."
        text = " ".join([*([lead] if lead else []), *ctx.sentences])
        event = self.file(
            name,
            text,
            location=ctx.location,
            involved=[name] if decl.secret else ctx.involved,
            public=ctx.public and not decl.secret,
            secret=decl.secret,
            importance=decl.importance + ctx.bump,
            decision=decision,
            tags=list(decl.tags),
            event_id=event_id,
        )
        self.events.insert(slot, self.events.pop())
        assert event is self.events[slot]

    # ------------------------------------------------------------------------------------------- effects

    def run_effects(self, ctx: _Ctx, effects: list[Effect]) -> None:
        """Apply effects in order. Their expressions are computed together first, from the world as it stood
        before any of them applied, so the order effects are listed in never changes what they compute (paying
        a debt: the coin moved and the debt cleared are one amount)."""
        outer = ctx.computed
        texts = [text for effect in effects for text in effect.expressions().values()]
        if texts:
            scope = self.scope(ctx)
            ctx.computed = {text: scope.number(self.w.expr(text)) for text in texts}
        for effect in effects:
            effect.apply(self, ctx)
        ctx.computed = outer

    def who(self, ctx: _Ctx, who: Who | str) -> list[str]:
        """The agents an effect's `who` names now, standing (or the actor itself)."""
        if who == Who.ACTOR:
            found = [ctx.actor]
        elif who == Who.TARGET:
            found = [ctx.target] if ctx.target else []
        elif who == Who.OTHERS_HERE:
            found = [n for n in self.audience(ctx.actor, ctx.location) if n != ctx.actor]
        elif who == Who.EVERYONE_HERE:
            found = self.audience(ctx.actor, ctx.location)
        else:
            found = list(self.s.agents)
        agents = self.s.agents
        return [n for n in found if (n in agents and not agents[n].fallen) or n == ctx.actor]

    def transition(self, ctx: _Ctx, objective: str, what: Transition, other: str | None, **values: Any) -> None:
        """An objective changed: its kind's declared text, importance, publicity and effects (their `target` is
        the other agent involved: the winner of a contest, the one who lit what was put out, the old holder)."""
        kind = self.w.kind(objective)
        rule = kind.transitions.get(what)
        clock = self.w.spec.clock
        if clock is not None and what in clock.on_transition:
            self.add_clock(clock.on_transition[what])
        text = (rule.text if rule and rule.text else None) or DEFAULT_TEXT[what]
        where = self.s.objectives[objective].at or ctx.location
        fill = {
            **self.w.stakes_vars(self.s, text),
            "actor": ctx.actor,
            "target": other or "",
            "objective": objective,
            "noun": self.w.noun(objective),
            "location": where,
            "destination": ctx.values.get("destination", ""),
            **values,
        }
        ctx.sentences.append(fmt(text, fill))
        public = rule.public if rule and rule.public is not None else what in PUBLIC_BY_DEFAULT
        ctx.public = ctx.public or public
        if other and other not in ctx.involved:
            ctx.involved.append(other)
        if rule is not None:
            ctx.bump += rule.bump
            if rule.effects:
                sub = _Ctx(
                    actor=ctx.actor,
                    decision=ctx.decision,
                    decl=ctx.decl,
                    target=other,
                    objective=objective,
                    location=ctx.location,
                    values=ctx.values,
                    involved=ctx.involved,
                )
                self.run_effects(sub, rule.effects)
                ctx.sentences.extend(sub.sentences)
                ctx.bump += sub.bump
                ctx.public = ctx.public or sub.public

    def maybe_fall(self, ctx: _Ctx, agent: str, by: str | None) -> None:
        """An agent whose vital stat is at its min falls: what it holds is dropped, lost, or taken."""
        vital = self.w.vital
        me = self.s.agents[agent]
        if vital is None or me.fallen or me.stats[vital] > self.w.spec.stats[vital].min:
            return
        me.fallen = True
        self.moves.pop(agent, None)
        ctx.sentences.append(f"{agent} fell.")
        if agent not in ctx.involved:
            ctx.involved.append(agent)
        for name in self.s.held_by(agent):
            rule = self.w.kind(name).on_fall
            obj = self.s.objectives[name]
            if rule == "taken" and by is not None and by != agent and not self.s.agents[by].fallen:
                obj.by = by
                self.transition(ctx, name, Transition.TAKEN, agent)
            elif rule == "lost":
                obj.status, obj.at, obj.by = Status.LOST, None, None
                self.transition(ctx, name, Transition.LOST, agent)
            else:
                obj.status, obj.at, obj.by = Status.FREE, self.where[agent] or ctx.location, None
                self.transition(ctx, name, Transition.DROPPED, agent)

    # ------------------------------------------------------------------------------ after every action

    def _journeys(self) -> None:
        """Arrivals of those already on the road, then this round's departures (a one-round move arrives now)."""
        s = self.s
        for name, agent in s.agents.items():
            if agent.en_route and not agent.fallen and (agent.arrives or 0) <= s.round and agent.to:
                agent.at, agent.to, agent.arrives = agent.to, None, None
                self.file(name, f"{name} arrived.", location=agent.at, involved=[name], importance=1.0)
        for name, (destination, time) in self.moves.items():
            agent = s.agents[name]
            if agent.fallen:
                continue
            if time <= 1:
                agent.at = destination
            else:
                agent.at, agent.to, agent.arrives = None, destination, s.round + time - 1

    def _regrow(self) -> None:
        for name, pool in self.w.spec.pools.items():
            growth = pool.regrowth
            if growth is None:
                continue
            value = self.s.pools[name]
            if growth.kind == "linear":
                delta = growth.rate
            else:
                capacity = growth.capacity or pool.max
                delta = growth.rate * (value - pool.min) * (1 - (value - pool.min) / (capacity - pool.min))
            self.add_pool(name, delta)

    def _round_rule(self, rule: RoundRule) -> None:
        """One `every_round` rule, for the world, every standing agent, or every pair its relation holds."""
        if rule.each == "world":
            visits: list[tuple[str, str | None]] = [("", None)]
        elif rule.each == "agent":
            visits = [(name, None) for name in self.s.standing()]
        else:
            assert rule.relation is not None
            rows = self.s.trust if rule.relation == TRUST else self.s.relations.get(rule.relation, {})
            standing = set(self.s.standing())
            visits = [(a, b) for a, row in list(rows.items()) for b in list(row) if a in standing and b in standing]
        for actor, target in visits:
            where = self.s.agents[actor].at if actor else None
            ctx = self.world_ctx()
            ctx.actor, ctx.target, ctx.location = actor, target, where or ""
            ctx.involved = [n for n in (actor, target) if n]
            if not self.w.holds(self.s, actor or None, rule.when, target=target):
                continue
            ctx.values = {"actor": actor, "target": target or "", "location": where or ""}
            self.run_effects(ctx, rule.effects)
            said = rule.text or ""
            text = " ".join([fmt(said, ctx.values | self.w.stakes_vars(self.s, said)), *ctx.sentences]).strip()
            if text:
                self.file(
                    actor, text, location=where, involved=ctx.involved, public=not actor, importance=2.0 + ctx.bump
                )

    def director_event(self, event: DirectorEvent, place: str | None) -> str:
        """Carry out a director's event drawn for a place (None: the whole world); what it says happened."""
        ctx = self.world_ctx()
        ctx.location = place or ""
        self.run_effects(ctx, event.effects)
        text = fmt(event.text, self.w.stakes_vars(self.s, event.text) | {"location": place or ""})
        return " ".join([text, *ctx.sentences])

    def world_ctx(self) -> _Ctx:
        """An effect's context where nobody acts: thresholds, triggers, the director."""
        return _Ctx(
            actor="",
            decision=Decision(action=""),
            decl=self.w.spec.actions[0],
            target=None,
            objective=None,
            location="",
        )

    def _trigger(self, trigger_id: str, trigger: Trigger) -> None:
        """A trigger whose condition holds at the round's end fires (once a cycle, unless it repeats)."""
        if (trigger_id in self.s.fired and not trigger.repeat) or not self.w.holds(self.s, None, trigger.when):
            return
        if not trigger.repeat:
            self.s.fired.append(trigger_id)
        ctx = self.world_ctx()
        self.run_effects(ctx, trigger.effects)
        text = " ".join([fmt(trigger.text, self.w.stakes_vars(self.s, trigger.text)), *ctx.sentences]).strip()
        if text:
            self.file("", text, location=None, involved=[], public=True, importance=6.0 + ctx.bump)
        if trigger.end:
            self.end(trigger.end)

    def _thresholds(self) -> None:
        """Thresholds crossed this round fire (text filed for everyone, one-off effects, ending); the set in
        force is what holds now plus sticky ones already in force."""
        fired = []
        before = set(self.start.active)
        for ref in self.w.thresholds:
            was = ref.spec.holds(self.w.gauge(self.start, ref.gauge))
            now = ref.spec.holds(self.w.gauge(self.s, ref.gauge))
            if now and not was:
                fired.append(ref)
        for ref in fired:
            ctx = self.world_ctx()
            self.run_effects(ctx, ref.spec.effects)
            if ref.spec.text or ctx.sentences:
                text = " ".join([fmt(ref.spec.text, self.w.stakes_vars(self.s, ref.spec.text)), *ctx.sentences]).strip()
                self.file("", text, location=None, involved=[], public=True, importance=6.0 + ctx.bump)
            if ref.spec.end:
                self.end(ref.spec.end)
        holding = set(self.w.holding_now(self.s))
        self.s.active = [
            t.id
            for t in self.w.thresholds
            if t.id in holding or (t.spec.sticky and t.id in before | {f.id for f in fired})
        ]

    def _ending(self, round_limit: int) -> str | None:
        s, w = self.s, self.w
        for ending in w.spec.endings:
            cond = ending.when
            if cond is None:
                continue
            checks = []
            if cond.objectives is not None:
                which = cond.objectives.which or list(w.objectives)
                count = sum(1 for o in which if s.objectives[o].status in cond.objectives.status)
                checks.append(count >= (cond.objectives.at_least or len(which)))
            if cond.clock is not None:
                checks.append(cond.clock.holds(float(s.clock or 0.0)))
            checks += [r.holds(s.pools[p]) for p, r in cond.pool.items()]
            if cond.all_fallen:
                checks.append(not s.standing())
            if cond.round_limit:
                checks.append(s.round >= round_limit)
            if cond.test is not None:
                checks.append(Scope(w.spec, s).holds(w.expr(cond.test)))
            if all(checks):
                return ending.id
        if w.vital is not None and not s.standing():
            return "all_fallen"
        return "round_limit" if s.round >= round_limit else None


def why_not(world: Compiled, state: KitState, agent: str, decision: Decision) -> str | None:
    """Why a decision is not allowed to this agent in this state, in words (None: it is)."""
    decl = world.actions.get(decision.action)
    if decl is None:
        return f"there is no action {decision.action!r} here"
    me = state.agents[agent]
    if not world.available(state, agent, decl):
        if decl.name in world.forbidden(state):
            return "it is not possible any more"
        short = world.short_of(state, agent, decl.name)
        if short:
            stat, (cost, spare) = next(iter(short.items()))
            label = world.spec.stats[stat].label or stat
            return f"it costs {num(cost)} {label} and {agent} can spend {num(spare)}"
        return "it is not possible now"
    if decl.target in (TargetKind.NONE, TargetKind.TEXT):
        return None
    target = decision.target
    if target is None:
        return f"it needs a target ({decl.target.value})"
    if target in world.targets(state, agent, decl):
        return None
    here = me.at or ""
    if decl.target is TargetKind.LOCATION:
        if target not in world.location:
            return f"there is no place called {target!r}"
        if target == here:
            return f"{agent} is already at {here}"
        if not world.complete and (here, target) not in world.edges:
            return f"no way leads from {here} to {target}"
        return f"the way from {here} to {target} is closed"
    if decl.target is TargetKind.AGENT:
        if target not in state.agents:
            return f"there is nobody called {target!r}"
        other = state.agents[target]
        if other.fallen:
            return f"{target} has fallen"
        if target == agent:
            return f"{agent} cannot aim it at themself"
        if other.at != here:
            return f"{target} is not at {here}" if other.at else f"{target} is on the road"
        return f"{target} is not a fitting target"
    if target not in state.objectives:
        return f"there is no {world.spec.labels.objective} called {target!r}"
    obj = state.objectives[target]
    if obj.at is not None and obj.at != here and decl.reach.value == "here":
        return f"the {target} is not at {here}"
    return f"the {target} is {world.word(target, obj.status)}"
