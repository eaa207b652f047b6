"""KitWorld: the `World` a kit YAML describes. Every method validates the state it is handed back into
`KitState` (never changing its input) and speaks only the world's own words and numbers."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from amphoreus_graph.contracts.actions import ActionSpec, Reach, TargetKind
from amphoreus_graph.contracts.memory import Moment, gist
from amphoreus_graph.contracts.turn import Decision, Option, TurnContext
from amphoreus_graph.contracts.world import (
    AgentProfile,
    AgentView,
    Critique,
    CycleEnd,
    Gauge,
    Perception,
    Resolution,
    WorldState,
    WorldView,
)
from amphoreus_graph.worlds.kit import social
from amphoreus_graph.worlds.kit.compiled import Compiled
from amphoreus_graph.worlds.kit.effects import (
    Move,
    walk,
)
from amphoreus_graph.worlds.kit.expr import ExprError
from amphoreus_graph.worlds.kit.rules import Round, why_not
from amphoreus_graph.worlds.kit.schema import KitLabels, KitSpec, ScoreSpec
from amphoreus_graph.worlds.kit.scope import Scope
from amphoreus_graph.worlds.kit.sight import in_order, noticed, within_sight
from amphoreus_graph.worlds.kit.state import AgentState, KitState, ObjectiveState
from amphoreus_graph.worlds.kit.terms import Status
from amphoreus_graph.worlds.kit.texts import fmt, num

DEFAULT_ENDINGS = {
    "round_limit": "The cycle ran its {rounds} rounds to the end.",
    "all_fallen": "Everyone had fallen, and the cycle ended with nobody left standing.",
}


class KitWorld:
    """A world declared in YAML over the rules kit (see docs/worlds-kit.md)."""

    def __init__(self, spec: KitSpec) -> None:
        self.spec = spec
        self.origin: tuple[dict[str, Any], Path] | None = None  # the mapping and file it was loaded from
        self.rules = Compiled(spec)
        self.name = spec.name
        self.title = spec.title
        self.description = spec.description
        self.labels: KitLabels = spec.labels
        self.rounds_per_cycle = spec.rounds_per_cycle
        self.tags: dict[str, str] = dict(spec.tags)
        self.agents = [
            AgentProfile(
                name=a.name,
                title=a.title,
                path=a.path,
                secondary_path=a.secondary_path,
                persona=a.persona,
                traits=list(a.traits),
                relationships=dict(a.relationships),
            )
            for a in spec.agents
        ]
        self.actions: dict[str, ActionSpec] = {
            d.name: ActionSpec(name=d.name, importance=d.importance, reach=d.reach, **Compiled.brief(d))
            for d in spec.actions
        }
        self._reads = threading.local()  # per thread, the last state parsed for reading and its dump: see `_read`

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the YAML it came from, so another process rebuilds it (resolvers included) by loading."""
        if self.origin is None:
            return (KitWorld, (self.spec,))
        from amphoreus_graph.worlds.kit.loader import load_kit_world

        return (load_kit_world, self.origin)

    def _state(self, state: WorldState) -> KitState:
        """The state parsed afresh, for a caller that changes it."""
        return KitState.model_validate(state)

    def _read(self, state: WorldState) -> KitState:
        """The state parsed for reading only (its users never change it), sealed (`KitState.seal`). The last one
        parsed is kept and serves the same dict again, or one equal to what it dumps to: every turn of a round
        perceives the same world, and both parsing it and comparing it cost with the society's size, once per agent
        and round, twice over. The same dict is recognised at once; so a state is a value: change a copy, not a
        state once handed to the world (nothing in the engine changes one). Kept per thread, so that societies of
        one world building turns in threads side by side do not evict each other."""
        last: tuple[KitState, WorldState, WorldState] | None = getattr(self._reads, "last", None)
        if last is not None and (state is last[2] or state == last[1]):
            self._reads.last = (last[0], last[1], state)
            return last[0]
        parsed = KitState.model_validate(state).seal()
        self._reads.last = (parsed, parsed.dump(), state)
        return parsed

    # ------------------------------------------------------------------------------------------- genesis

    def genesis(self, cycle: int) -> WorldState:
        spec = self.spec
        state = KitState(
            cycle=cycle,
            agents={
                a.name: AgentState(at=a.start, stats={s: a.stats.get(s, stat.start) for s, stat in spec.stats.items()})
                for a in spec.agents
            },
            objectives={o.name: ObjectiveState(at=o.location) for o in spec.objectives},
            clock=spec.clock.start if spec.clock else None,
            clocks={name: clock.start for name, clock in spec.clocks.items()},
            pools={name: pool.start for name, pool in spec.pools.items()},
            trust={a.name: row for a in spec.agents if (row := self._trust_at_start(a.name))},
        )
        for a in spec.agents:
            for relation, row in a.relations.items():
                for other, value in row.items():
                    state.set_relation(relation, a.name, other, float(value))
        social.seed_posts(spec, state)
        state.active = self.rules.holding_now(state)
        return state.dump()

    def _trust_at_start(self, agent: str) -> dict[str, float]:
        """An agent's declared trust in the others it names (not itself, nor anyone not of the world), in the
        world's order, where not 0: the cost of what it declares, not of the society's size."""
        said = self.rules.agents[agent].relationships
        order = self.rules.order
        named = sorted((o for o in said if o != agent and o in order and said[o]), key=order.__getitem__)
        return {o: float(said[o]) for o in named}

    def actors(self, state: WorldState) -> list[str]:
        """Standing agents who are not en route and may do something, in the world's order (a journey's rounds
        are spent on the road; an agent offered nothing at all sits the round out)."""
        world = self._read(state)
        return [
            n
            for n in self.rules.agents
            if not world.agents[n].fallen and not world.agents[n].en_route and self.rules.offers_anything(world, n)
        ]

    # --------------------------------------------------------------------------------------------- frame

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        """Open a round: one situation per location (its own templates, else the world's), plus the stakes."""
        world = self._state(state)
        world.round += 1
        world, news = self._director(world, rng)
        values = self.rules.stakes_vars(world)
        flavour = {}
        for loc in self.spec.locations:
            templates = loc.situations or self.spec.situations
            text = templates[rng.randrange(len(templates))] if templates else ""
            flavour[loc.name] = fmt(text, values | {"location": loc.name})
        stakes = fmt(self.spec.stakes, values)
        situations = {}
        actors = self.actors(world.dump())
        social.mark_reach(self.spec, world, actors)
        for name in actors:
            here = world.agents[name].at or ""
            parts = (flavour[here], news.get(here, ""), news.get("", ""), stakes)
            situations[name] = " ".join(p for p in parts if p) or f"A new round begins at {here}."
        return world.dump(), situations

    def _director(self, world: KitState, rng: random.Random) -> tuple[KitState, dict[str, str]]:
        """The director's draws as the round opens: the state after their effects, and what each place ("" for
        the whole world) is told."""
        if not self.spec.director:
            return world, {}
        now = Moment.of(world.cycle, world.round, self.rounds_per_cycle)
        work = Round(self.rules, world, {}, rng, now)
        news: dict[str, list[str]] = {}
        for draw in self.spec.director:
            for place in self.rules.locations if draw.per == "place" else [None]:
                if draw.chance < 1 and rng.random() >= draw.chance:
                    continue
                fitting = [
                    e
                    for e in draw.events
                    if (e.at is None or place in e.at) and self.rules.holds(work.s, None, e.when, place=place)
                ]
                if not fitting:
                    continue
                event = rng.choices(fitting, weights=[e.weight for e in fitting])[0]
                news.setdefault(place or "", []).append(work.director_event(event, place))
        return work.s, {place: " ".join(texts) for place, texts in news.items()}

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        world = self._read(state)
        aim, _ = self._aim(world, agent)
        where = world.agents[agent].at or world.agents[agent].to or ""
        tail = f" {agent} seeks {aim}." if aim else ""
        return f"{gist(situation)}. {agent} is at {where}.{tail}"

    # ----------------------------------------------------------------------------------------- perceive

    def perceive(self, state: WorldState, agent: str) -> Perception:
        world = self._read(state)
        me = world.agents[agent]
        options = self.rules.options(world, agent)
        aim, aim_target = self._aim(world, agent)
        if aim_target is not None and not any(aim_target in o.targets for o in options):
            aim_target = None
        nearby = noticed(world, agent, me.at or "", self.spec.sight)  # whom it sees by name, trusts or not
        return Perception(
            location=me.at,
            aim=aim,
            aim_target=aim_target,
            status=self._status(world, agent),
            observations=self._observations(world, agent, nearby),
            options=options,
            pressures=self._pressures(world, agent, options),
            trust=self._trust(world, agent, nearby),
        )

    def _trust(self, world: KitState, agent: str, nearby: list[str]) -> dict[str, float]:
        """The agent's trust in each other agent; in a world that bounds sight, in those it notices (`nearby`) and
        those it holds a trust in (not a row as long as the society: it is in every sample, and read as whom the agent
        knows)."""
        if self.spec.sight is None:
            return world.trust_row(agent)
        row = world.trust.get(agent, {})
        known = [o for o in row if o != agent and o in world.agents]
        return {o: row.get(o, 0.0) for o in in_order(world, [*nearby, *known])}

    def _aim(self, world: KitState, agent: str) -> tuple[str, str | None]:
        """The agent's aim in words, and the option target that pursues it now: the objective itself where the
        agent stands, else the next place on the quickest open route towards it (or towards where it goes)."""
        decl = self.rules.agents[agent]
        seeks = decl.seeks
        if seeks is None:
            return decl.aim or "", None
        kind = self.rules.kind(seeks)
        obj = world.objectives[seeks]
        home = self.rules.objectives[seeks].location
        destination = ", ".join(kind.deliver_to)
        default = (
            "the {objective} from {location}, carried to {destination}"
            if kind.mode == "carried" and kind.deliver_to
            else "the {objective} at {location}"
        )
        values = {"objective": seeks, "noun": self.rules.noun(seeks), "location": home, "destination": destination}
        aim = decl.aim or fmt(kind.aim or default, values)
        here = world.agents[agent].at
        if here is None:
            return aim, None
        if obj.status is Status.HELD and obj.by == agent:
            goal = kind.deliver_to[0] if kind.deliver_to and here not in kind.deliver_to else None
        elif self.rules.claimable(world, seeks) and obj.at is not None:
            goal = obj.at
        else:
            return aim, None
        if goal is None or goal == here:
            return aim, seeks if goal == here else None
        step = self.rules.route(world, here, goal)
        return aim, step[0] if step else None

    def _status(self, world: KitState, agent: str) -> dict[str, str]:
        me = world.agents[agent]
        status = {
            (stat.label or name): f"{num(me.stats[name])}/{num(stat.max)}"
            for name, stat in self.spec.stats.items()
            if stat.shown
        }
        if self.rules.carried:
            status[self.labels.holding] = ", ".join(world.held_by(agent)) or "nothing"
        if self.spec.clock is not None and world.clock is not None:
            status[self.spec.clock.label] = f"{num(world.clock)}/{num(self.spec.clock.max)}"
        for name, clock in self.spec.clocks.items():
            status[self.rules.gauge_label(name)] = f"{num(world.clocks[name])}/{num(clock.max)}"
        for name, pool in self.spec.pools.items():
            status[pool.label or name] = f"{num(world.pools[name])}/{num(pool.max)}"
        for name, relation in self.spec.relations.items():
            row = world.relations.get(name, {}).get(agent, {})
            if relation.shown and row:
                status[relation.label or name] = ", ".join(f"{other} {num(v)}" for other, v in row.items())
        if me.tally:
            status[self.labels.score] = num(me.tally)
        return status

    def _observations(self, world: KitState, agent: str, nearby: list[str]) -> list[str]:
        """What the agent observes, naming the others it notices where it stands (`nearby`)."""
        me = world.agents[agent]
        here = me.at or ""
        standing_here = me.at is not None and not me.fallen  # among those present at `here`
        unseen = len(world.present(here)) - len(nearby) - standing_here
        private = here in self.rules.location and self.rules.location[here].private
        named = ", ".join(nearby) + (f" and {unseen} other{'s' * (unseen != 1)}" if unseen else "")
        seen = [] if private else [f"Present at {here}: {named if nearby else 'nobody else'}."]
        for name, obj in world.objectives.items():
            if obj.at == here and obj.status is not Status.HELD:
                by = f" by {obj.by}" if obj.by and obj.status in (Status.LIT, Status.DELIVERED) else ""
                seen.append(f"The {name} is here: {self.rules.word(name, obj.status)}{by}.")
        if not private:
            seen += self._news_for(world, agent)
        seen += social.perceived(self.spec, world, agent)
        ways = self.rules.neighbours(world, here)
        if ways and not self.rules.complete:
            seen.append(
                "Open ways from here: "
                + ", ".join(f"{b} ({t} round{'s' if t > 1 else ''})" for b, t in ways.items())
                + "."
            )
        return seen

    def _news_for(self, world: KitState, agent: str) -> list[str]:
        """What the agent sees of the others wherever they are (`_news`): all of it, or in a world that bounds
        sight the lines about who carries what (as many as the objectives at most) and about its acquaintances this
        round (sight.py), then how many of the others it does not know of have fallen or are on the way."""
        news = world.derived("news", lambda: _news(world))
        if self.spec.sight is None:
            return [line for other, line in news if other != agent]
        about: dict[str, list[str]] = world.derived("news by agent", lambda: _by_agent(news))
        known = within_sight(world, agent, "everyone", lambda: list(world.agents), self.spec.sight)
        shown = in_order(world, [o for o in [*world.carried(), *known] if o != agent and o in about])
        lines = [line for other in shown for line in about[other]]
        fallen, away = world.derived("news counts", lambda: _counts(world))
        for other in [agent, *shown]:
            state = world.agents[other]
            fallen -= state.fallen
            away -= state.en_route and not state.fallen
        told = [f"{away} on the way" if away else "", f"{fallen} fallen" if fallen else ""]
        if away or fallen:
            lines.append(f"Of the others you do not see: {' and '.join(t for t in told if t)}.")
        return lines

    def _pressures(self, world: KitState, agent: str, options: list[Option]) -> dict[str, float]:
        """How pressing each option is now, in [-1, 1] (docs/worlds-kit.md, "Pressures"): what its effects say
        (`EffectRule.pressure`; an effect marked `once` counts once per action), less for a cost the agent can
        barely pay, plus the action's declared pressure rules."""
        me = world.agents[agent]
        clock = self.spec.clock
        urgency = 0.0
        if clock is not None and world.clock is not None:
            urgency = (world.clock - clock.min) / (clock.max - clock.min)
        _, aim_target = self._aim(world, agent)
        hurt, scarce = self._hurt(world, agent), self._scarcity(world)  # the agent's plight: once, for every option
        out: dict[str, float] = {}
        for option in options:
            decl = self.rules.actions[option.action]
            effects = list(walk(decl.effects))
            pressing = Pressing(self, world, agent, option, aim_target, urgency, hurt, scarce)
            once = list({type(e): e for e in effects if e.once}.values())
            p = sum(e.pressure(pressing) for e in once) + sum(e.pressure(pressing) for e in effects if not e.once)
            for stat, cost in self.rules.costs(world, option.action).items():
                spare = me.stats[stat] - self.spec.stats[stat].min
                if cost >= spare:
                    p -= 0.3
            for rule in decl.pressure:
                if self.rules.holds(world, agent, rule.when):
                    p += rule.add
            if p:
                out[option.action] = round(max(-1.0, min(1.0, p)), 3)
        return out

    def _sign(self, world: KitState, agent: str, value: float | str) -> float | None:
        """Which way a declared change goes for this agent now: 1, -1 or 0; None for an expression that needs
        the decision's target, which cannot be told before the decision."""
        try:
            amount = self.rules.amount(value, Scope(self.spec, world, actor=agent))
        except ExprError:
            return None
        return float((amount > 0) - (amount < 0))

    def _hurt(self, world: KitState, agent: str) -> float:
        """How hurt an agent is: 0 with its vital stat at max, 1 at min (0 in a world where nobody falls)."""
        vital = self.rules.vital
        if vital is None:
            return 0.0
        declared = self.spec.stats[vital]
        return 1 - (world.agents[agent].stats[vital] - declared.min) / (declared.max - declared.min)

    def _scarcity(self, world: KitState) -> dict[str, float]:
        """Per pool, 0 while it is above half its range (or its lowest falling threshold), rising to 1 as it
        nears that threshold: how strongly restraint is urged."""
        out = {}
        for name, pool in self.spec.pools.items():
            floor = max([t.at for t in pool.thresholds if t.direction == "down"], default=pool.min)
            span = max(pool.max - floor, 1e-9)
            left = (world.pools[name] - floor) / span
            out[name] = round(max(0.0, min(1.0, (0.5 - left) * 2)), 3)
        return out

    # ----------------------------------------------------------------------------------------- resolve

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        work = Round(self.rules, self._state(state), decisions, rng, now)
        work.run(round_limit)
        return Resolution(state=work.s.dump(), events=work.events)

    def outcome(self, state: WorldState) -> str | None:
        outcome = state.get("outcome")
        return str(outcome) if outcome else None

    def end(self, state: WorldState) -> CycleEnd:
        world = self._state(state)
        outcome = world.outcome or "round_limit"
        ending = self.rules.endings.get(outcome)
        values = self.rules.stakes_vars(world) | {"outcome": outcome}
        text = fmt(ending.text if ending else DEFAULT_ENDINGS.get(outcome, "The cycle ended."), values)
        score = self._score(world, ending.score if ending and ending.score else self.spec.score)
        return CycleEnd(
            outcome=outcome,
            text=text,
            score=score,
            tally={name: a.tally for name, a in world.agents.items()},
            facts={
                "round": world.round,
                **({self.spec.clock.label: world.clock} if self.spec.clock else {}),
                **{pool.label or name: world.pools[name] for name, pool in self.spec.pools.items()},
                **{self.rules.gauge_label(name): world.clocks[name] for name in self.spec.clocks},
                **{
                    f"reach of {t}": len(world.reached.get(t, []))
                    for t in (self.spec.feed.topics if self.spec.feed else [])
                },
                **{
                    f"motions {o}": n for o in ("passed", "failed") if (n := sum(m.outcome == o for m in world.motions))
                },
                **{s.value: n for s in Status if (n := sum(1 for o in world.objectives.values() if o.status is s))},
                "fallen": sorted(n for n, a in world.agents.items() if a.fallen),
            },
        )

    def _score(self, world: KitState, spec: ScoreSpec) -> float:
        total = spec.base
        for status, weight in spec.objectives.items():
            total += weight * sum(1 for o in world.objectives.values() if o.status is status)
        for name, weight in spec.pools.items():
            pool = self.spec.pools[name]
            total += weight * (world.pools[name] - pool.min) / (pool.max - pool.min)
        total += spec.tally * sum(a.tally for a in world.agents.values())
        if spec.clock and self.spec.clock is not None and world.clock is not None:
            total += spec.clock * (world.clock - self.spec.clock.min) / (self.spec.clock.max - self.spec.clock.min)
        total += spec.standing * len(world.standing())
        if spec.expr is not None:
            total += Scope(self.spec, world).number(self.rules.expr(spec.expr))
        if spec.per_agent is not None:
            each = self.rules.expr(spec.per_agent)
            total += sum(Scope(self.spec, world, actor=name).number(each) for name in world.agents)
        return round(total, 4)

    # -------------------------------------------------------------------------------------------- view

    def view(self, state: WorldState) -> WorldView:
        world = self._read(state)
        gauges = []
        if self.spec.clock is not None and world.clock is not None:
            c = self.spec.clock
            gauges.append(Gauge(name=c.label, value=world.clock, low=c.min, high=c.max))
        for name, clock in self.spec.clocks.items():
            label = self.rules.gauge_label(name)
            gauges.append(Gauge(name=label, value=world.clocks[name], low=clock.min, high=clock.max))
        for name, pool in self.spec.pools.items():
            gauges.append(Gauge(name=pool.label or name, value=world.pools[name], low=pool.min, high=pool.max))
        for topic in self.spec.feed.topics if self.spec.feed else []:
            reached = float(len(world.reached.get(topic, [])))
            gauges.append(Gauge(name=f"reach of {topic}", value=reached, low=0.0, high=float(len(world.agents))))
        agents = {}
        for name, a in world.agents.items():
            fields = {(stat.label or s): num(a.stats[s]) for s, stat in self.spec.stats.items() if stat.shown}
            if self.rules.carried:
                fields[self.labels.holding] = ", ".join(world.held_by(name))
            fields[self.labels.score] = num(a.tally)
            agents[name] = AgentView(location=a.at or f"en route to {a.to}", active=not a.fallen, fields=fields)
        return WorldView(
            cycle=world.cycle,
            round=world.round,
            outcome=world.outcome,
            agents=agents,
            gauges=gauges,
            objectives={name: self._objective_words(name, o) for name, o in world.objectives.items()},
            trust=world.trust,
            score={name: a.tally for name, a in world.agents.items()},
        )

    def _objective_words(self, name: str, obj: ObjectiveState) -> str:
        word = self.rules.word(name, obj.status)
        if obj.status is Status.HELD:
            return f"{word} by {obj.by}"
        by = f" by {obj.by}" if obj.by else ""
        where = f" at {obj.at}" if obj.at else ""
        return f"{word}{by}{where}"

    # ---------------------------------------------------------------------------------------- critique

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        """The world's rules a decision breaks, judged from the turn alone (docs/worlds-kit.md, "Critiques")."""
        decl = self.rules.actions.get(decision.action)
        if decl is None:
            return [Critique(cost=1.0, reason=f"{decision.action!r} is no action of {self.title}")]
        found: list[Critique] = []
        here = turn.location or ""
        target = decision.target
        option = turn.option(decision.action)
        offered = option.targets if option else None
        if decl.target not in (TargetKind.NONE, TargetKind.TEXT) and not target:
            found.append(Critique(cost=0.5, reason=f"{decision.action} needs a target and names none"))
        elif target and (option is None or target not in (offered or [])):
            found += self._misaimed(decl.name, decl.target, decl.reach, here, target or "", turn)
        for stat, cost in self._costs_seen(turn, decl.name).items():
            label = self.spec.stats[stat].label or stat
            have = _number(turn.status.get(label))
            if have is not None and cost > have - self.spec.stats[stat].min + 1e-9:
                found.append(
                    Critique(
                        cost=0.6, reason=f"{decision.action} costs {num(cost)} {label}; {turn.agent} has {num(have)}"
                    )
                )
        if option is None and not found:
            found.append(Critique(cost=0.5, reason=f"{decision.action} is not possible for {turn.agent} now"))
        return found

    def _costs_seen(self, turn: TurnContext, action: str) -> dict[str, float]:
        """An action's cost as the turn shows the world: its own, plus thresholds that hold on the gauges in
        the turn's status lines (sticky thresholds whose gauge fell back are not seen)."""
        total = dict(self.rules.actions[action].cost)
        for ref in self.rules.thresholds:
            value = _number(turn.status.get(self.rules.gauge_label(ref.gauge)))
            if value is None or not ref.spec.holds(value):
                continue
            for key in (action, "*"):
                for stat, extra in ref.spec.costs.get(key, {}).items():
                    total[stat] = total.get(stat, 0.0) + extra
        return total

    def _misaimed(
        self, action: str, kind: TargetKind, reach: Reach, here: str, target: str, turn: TurnContext
    ) -> list[Critique]:
        if kind is TargetKind.LOCATION:
            if target not in self.rules.location:
                return [Critique(cost=0.8, reason=f"{action} aims at {target!r}, a place {self.title} does not have")]
            moves = any(isinstance(e, Move) for e in walk(self.rules.actions[action].effects))
            if moves and reach is Reach.EDGE and not self.rules.complete and (here, target) not in self.rules.edges:
                return [Critique(cost=0.9, reason=f"moves from {here} to {target} along no edge of the map")]
            return [Critique(cost=0.6, reason=f"the way from {here} to {target} is not open now")]
        if kind is TargetKind.AGENT:
            if target not in self.rules.agents:
                return [Critique(cost=0.8, reason=f"{action} aims at {target!r}, who is nobody here")]
            return [
                Critique(
                    cost=0.8,
                    reason=f"acts on {target}, who is not at {here}"
                    if reach is Reach.HERE
                    else f"{target} is out of reach",
                )
            ]
        if kind is TargetKind.OBJECTIVE:
            if target not in self.rules.objectives:
                return [Critique(cost=0.8, reason=f"{action} aims at {target!r}, which {self.title} does not have")]
            home = self.rules.objectives[target].location
            if reach is Reach.HERE and home != here:
                return [Critique(cost=0.7, reason=f"acts on the {target}, which is not at {here}")]
            return [Critique(cost=0.5, reason=f"the {target} is not in a state to {action.replace('_', ' ')}")]
        return []

    def vocabulary(self) -> set[str]:
        words = set(self.rules.locations) | set(self.rules.objectives) | set(self.rules.agents)
        words |= {k.noun for k in self.rules.kinds.values() if k.noun}
        labels = self.labels
        words |= {labels.director, labels.objective, labels.objectives, labels.agent, labels.agents}
        if self.spec.clock is not None:
            words.add(self.spec.clock.label)
        words |= {pool.label or name for name, pool in self.spec.pools.items()}
        words |= {stat.label or name for name, stat in self.spec.stats.items()}
        return {w for w in words if w}

    # ------------------------------------------------------------------------------------------ helpers

    def problem(self, state: WorldState, agent: str, decision: Decision) -> str | None:
        """Why the world would reject a decision in this state (None: it would carry it out)."""
        return why_not(self.rules, self._read(state), agent, decision)


def _news(world: KitState) -> list[tuple[str, str]]:
    """What every agent outside a private place sees of the others wherever they are, as (whom it is about, the
    line), in the world's order: who carries what, who has fallen, who is on the way where."""
    carried = world.carried()
    lines = []
    for other, state in world.agents.items():
        if held := carried.get(other):
            lines.append((other, f"{other} carries the {', the '.join(held)}."))
        if state.fallen:
            lines.append((other, f"{other} has fallen."))
        elif state.en_route:
            lines.append((other, f"{other} is on the way to {state.to}."))
    return lines


def _by_agent(news: list[tuple[str, str]]) -> dict[str, list[str]]:
    """News lines by whom they are about, in their order."""
    out: dict[str, list[str]] = {}
    for other, line in news:
        out.setdefault(other, []).append(line)
    return out


def _counts(world: KitState) -> tuple[int, int]:
    """How many agents have fallen, and how many (standing) are on the way."""
    fallen = sum(a.fallen for a in world.agents.values())
    return fallen, sum(a.en_route and not a.fallen for a in world.agents.values())


def _number(text: str | None) -> float | None:
    """The leading number of a status line such as '8/10'."""
    try:
        return float((text or "").split("/")[0])
    except ValueError:
        return None


class Pressing:
    """What an effect's `pressure` reads: the option it is part of and the agent's plight now."""

    def __init__(
        self,
        world: KitWorld,
        state: KitState,
        agent: str,
        option: Option,
        aim_target: str | None,
        urgency: float,
        hurt: float,
        scarce: dict[str, float],
    ) -> None:
        self.world, self.state, self.agent, self.option = world, state, agent, option
        self.aim_target, self.urgency, self.hurt, self.scarce = aim_target, urgency, hurt, scarce
        self.seeks = world.rules.agents[agent].seeks
        self.vital = world.rules.vital

    def most_hurt(self, others: list[str]) -> float:
        """How hurt the most hurt of `others` is (asked of everyone present, by each of them: worked out once)."""
        state, world = self.state, self.world
        hurt = state.derived("hurt", lambda: {name: world._hurt(state, name) for name in state.agents})
        return max(map(hurt.__getitem__, others))

    def sign(self, value: float | str) -> float | None:
        return self.world._sign(self.state, self.agent, value)
