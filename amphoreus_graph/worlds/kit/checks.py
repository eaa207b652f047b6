"""Cross-references a kit world's YAML must get right once its shapes are valid: names it mentions exist,
numbers lie in their declared ranges, templates use placeholders the kit fills, effects fit their action.

`check(spec)` raises `Problem(field path, what was expected)` for the first one found; the loader turns it into
one ScenarioError line.
"""

from __future__ import annotations

from collections.abc import Iterable

from amphoreus_graph.catalogs.names import AMBIGUOUS, ambiguous, name_problem, shown
from amphoreus_graph.contracts.actions import TAGS, Reach, TargetKind
from amphoreus_graph.worlds.kit.compiled import (
    ACTION_VARS,
    AIM_VARS,
    CLOCK,
    STAKES_VARS,
    TRANSITION_VARS,
    Compiled,
    check_template,
    num,
)
from amphoreus_graph.worlds.kit.schema import (
    Bump,
    Chance,
    Claim,
    ClockChange,
    Condition,
    Deliver,
    Douse,
    Effect,
    End,
    Harm,
    Harvest,
    Heal,
    Lose,
    Move,
    PoolChange,
    Range,
    ScoreSpec,
    Shield,
    StatChange,
    Status,
    Take,
    TallyChange,
    Threshold,
    TrustChange,
    Who,
)

RESERVED_ENDINGS = ("round_limit", "all_fallen")


class Problem(Exception):
    def __init__(self, field: str, expected: str) -> None:
        super().__init__(f"{field}: {expected}")
        self.field = field
        self.expected = expected


def _one_of(kind: str, value: object, options: Iterable[str]) -> str:
    """Names shown with `ascii()`: a look-alike of a known name shows how it differs."""
    return f"unknown {kind} {value!a}; expected one of [{shown(sorted(options))}]"


def _known(field: str, kind: str, value: str, options: Iterable[str]) -> None:
    options = list(options)
    if value not in options:
        raise Problem(field, _one_of(kind, value, options))


def _unique(field: str, kind: str, names: list[str]) -> None:
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise Problem(field, f"duplicate {kind} names {dupes}; expected unique names")


def _template(field: str, text: str, allowed: Iterable[str]) -> None:
    problem = check_template(text, allowed)
    if problem is not None:
        raise Problem(field, problem)


class _Checker:
    def __init__(self, world: Compiled) -> None:
        self.w = world
        self.spec = world.spec
        self.stakes = world.stakes_names()

    def run(self) -> None:
        spec = self.spec
        _unique("locations", "location", [loc.name for loc in spec.locations])
        _unique("objectives", "objective", [o.name for o in spec.objectives])
        _unique("actions", "action", [a.name for a in spec.actions])
        _unique("agents", "agent", [a.name for a in spec.agents])
        _unique("endings", "ending", [e.id for e in spec.endings])
        self._agents_names()
        self._names_apart()
        self._map()
        self._numbers()
        self._objectives()
        self._actions()
        self._agents()
        self._endings()
        for i, text in enumerate(spec.situations):
            _template(f"situations[{i}]", text, self.stakes | {"location"})
        _template("stakes", spec.stakes, self.stakes)

    def _agents_names(self) -> None:
        """Names of things reach prompts and ids as they are: each on one visible line, agents told apart
        (catalogs/names.py)."""
        spec = self.spec
        names = [a.name for a in spec.agents]
        things = {
            "locations": [t.name for t in spec.locations],
            "objectives": [t.name for t in spec.objectives],
            "actions": [t.name for t in spec.actions],
            "agents": names,
        }
        for field, named in things.items():
            for i, name in enumerate(named):
                if problem := name_problem(name):
                    raise Problem(f"{field}[{i}].name", f"{name!a}: {problem}")
        if clashes := ambiguous(names):
            raise Problem("agents", f"ambiguous agent names {shown(clashes)} ({AMBIGUOUS}); expected names that differ")
        for i, name in enumerate(names):
            if "#" in name or name != name.strip():
                raise Problem(f"agents[{i}].name", f"{name!r}; expected a name without '#' or outer spaces")

    def _names_apart(self) -> None:
        """Pools and stats name template placeholders and gauges: they must not collide with the kit's own."""
        taken = set(STAKES_VARS) | {s.value for s in Status} | {CLOCK}
        for name in self.spec.pools:
            if name in taken or name in self.spec.stats:
                raise Problem(
                    f"pools.{name}",
                    f"the name {name!r} is taken; expected a name other than {sorted(taken | set(self.spec.stats))}",
                )
        if len([s for s in self.spec.stats.values() if s.vital]) > 1:
            raise Problem("stats", "more than one vital stat; expected at most one (the one whose min fells an agent)")
        for tag in self.spec.tags:
            if tag in TAGS:
                raise Problem(f"tags.{tag}", f"{tag!r} is a default tag already; expected new tags only")

    def _pair(self, field: str, pair: list[str]) -> None:
        if len(pair) != 2:
            raise Problem(field, f"{pair!r}; expected a pair [from, to]")
        for j, loc in enumerate(pair):
            _known(f"{field}[{j}]", "location", loc, self.w.locations)
        if pair[0] == pair[1]:
            raise Problem(field, f"{pair!r} joins a place to itself; expected two different locations")
        if not self.w.complete and (pair[0], pair[1]) not in self.w.edges and (pair[1], pair[0]) not in self.w.edges:
            raise Problem(field, f"no edge between {pair[0]!r} and {pair[1]!r}; expected a declared edge")

    def _map(self) -> None:
        seen: set[tuple[str, str]] = set()
        for i, edge in enumerate(self.spec.edges):
            a, b = edge.between
            for j, loc in enumerate(edge.between):
                _known(f"edges[{i}].between[{j}]", "location", loc, self.w.locations)
            if a == b:
                raise Problem(f"edges[{i}].between", f"{edge.between!r} joins a place to itself; expected two places")
            pairs = {(a, b)} if edge.one_way else {(a, b), (b, a)}
            if pairs & seen:
                raise Problem(f"edges[{i}]", f"a second edge from {a!r} to {b!r}; expected one edge per way")
            seen |= pairs
        for i, place in enumerate(self.spec.locations):
            for j, text in enumerate(place.situations):
                _template(f"locations[{i}].situations[{j}]", text, self.stakes | {"location"})

    def _numbers(self) -> None:
        spec = self.spec
        clock = spec.clock
        if clock is not None:
            for key in clock.on_action:
                _known(f"clock.on_action.{key}", "action", key, self.w.actions)
            for i, t in enumerate(clock.thresholds):
                self._threshold(f"clock.thresholds[{i}]", t, clock.min, clock.max)
        for name, pool in spec.pools.items():
            capacity = pool.regrowth.capacity if pool.regrowth else None
            if capacity is not None and not pool.min < capacity <= pool.max:
                raise Problem(
                    f"pools.{name}.regrowth.capacity",
                    f"{num(capacity)}; expected a capacity in ({num(pool.min)}, {num(pool.max)}]",
                )
            for i, t in enumerate(pool.thresholds):
                self._threshold(f"pools.{name}.thresholds[{i}]", t, pool.min, pool.max)
        ids = [t.id for t in self.w.thresholds]
        if dupes := sorted({i for i in ids if ids.count(i) > 1}):
            raise Problem("thresholds", f"two thresholds at the same value {dupes}; expected one per value")

    def _threshold(self, field: str, t: Threshold, low: float, high: float) -> None:
        if not low <= t.at <= high:
            raise Problem(
                f"{field}.at", f"{num(t.at)} is outside the range [{num(low)}, {num(high)}]; expected a value in it"
            )
        for key in ("close", "open"):
            for j, pair in enumerate(getattr(t, key)):
                self._pair(f"{field}.{key}[{j}]", pair)
        for action, costs in t.costs.items():
            if action != "*":
                _known(f"{field}.costs.{action}", "action", action, self.w.actions)
            for stat, amount in costs.items():
                _known(f"{field}.costs.{action}.{stat}", "stat", stat, self.spec.stats)
                if amount < 0:
                    raise Problem(f"{field}.costs.{action}.{stat}", f"{num(amount)}; expected an extra cost ≥ 0")
        for j, action in enumerate(t.forbid):
            _known(f"{field}.forbid[{j}]", "action", action, self.w.actions)
        if t.end is not None:
            self._ending_ref(f"{field}.end", t.end)
        _template(f"{field}.text", t.text, self.stakes)
        self._effects(f"{field}.effects", t.effects, context="threshold", target=TargetKind.NONE, reach=Reach.ANYWHERE)

    def _ending_ref(self, field: str, outcome: str) -> None:
        _known(field, "ending", outcome, [*self.w.endings, *RESERVED_ENDINGS])

    def _objectives(self) -> None:
        spec = self.spec
        for key, kind in self.w.kinds.items():
            field = f"objective_kinds.{key}"
            for attr in ("chance_stat", "contest_stat"):
                stat = getattr(kind, attr)
                if stat is not None:
                    _known(f"{field}.{attr}", "stat", stat, spec.stats)
            for j, loc in enumerate(kind.deliver_to):
                _known(f"{field}.deliver_to[{j}]", "location", loc, self.w.locations)
            if kind.aim is not None:
                _template(f"{field}.aim", kind.aim, AIM_VARS)
            for what, rule in kind.transitions.items():
                if rule.text is not None:
                    _template(f"{field}.transitions.{what.value}.text", rule.text, self.stakes | TRANSITION_VARS)
                self._effects(
                    f"{field}.transitions.{what.value}.effects",
                    rule.effects,
                    context="transition",
                    target=TargetKind.AGENT,
                    reach=Reach.ANYWHERE,
                )
        for i, obj in enumerate(spec.objectives):
            if obj.kind is None and len(self.w.kinds) > 1:
                raise Problem(f"objectives[{i}].kind", f"missing; expected one of {sorted(self.w.kinds)}")
            if obj.kind is not None:
                _known(f"objectives[{i}].kind", "objective kind", obj.kind, self.w.kinds)
            _known(f"objectives[{i}].location", "location", obj.location, self.w.locations)

    def _condition(self, field: str, cond: Condition | None) -> None:
        if cond is None:
            return
        for j, loc in enumerate(cond.at or []):
            _known(f"{field}.at[{j}]", "location", loc, self.w.locations)
        for stat, r in cond.stat.items():
            _known(f"{field}.stat.{stat}", "stat", stat, self.spec.stats)
            self._range(f"{field}.stat.{stat}", r)
        for pool, r in cond.pool.items():
            _known(f"{field}.pool.{pool}", "pool", pool, self.spec.pools)
            self._range(f"{field}.pool.{pool}", r)
        if cond.clock is not None:
            if self.spec.clock is None:
                raise Problem(f"{field}.clock", "the world has no clock; expected a clock: section first")
            self._range(f"{field}.clock", cond.clock)

    @staticmethod
    def _range(field: str, r: Range) -> None:
        if r.min is not None and r.max is not None and r.min > r.max:
            raise Problem(field, f"min {num(r.min)} is above max {num(r.max)}; expected min ≤ max")

    def _actions(self) -> None:
        tags = set(TAGS) | set(self.spec.tags)
        for i, decl in enumerate(self.spec.actions):
            field = f"actions[{i}]"
            for j, tag in enumerate(decl.tags):
                if tag not in tags:
                    raise Problem(f"{field}.tags[{j}]", _one_of("tag", tag, tags) + " (or declare it under tags:)")
            self._condition(f"{field}.when", decl.when)
            for j, rule in enumerate(decl.pressure):
                self._condition(f"{field}.pressure[{j}].when", rule.when)
            for stat in decl.cost:
                _known(f"{field}.cost.{stat}", "stat", stat, self.spec.stats)
            flt = decl.targets
            if (flt.self_ or flt.holding is not None) and decl.target is not TargetKind.AGENT:
                raise Problem(f"{field}.targets", "self/holding filter agent targets; expected target: agent")
            if (flt.status is not None or flt.kinds is not None) and decl.target is not TargetKind.OBJECTIVE:
                raise Problem(f"{field}.targets", "status/kinds filter objective targets; expected target: objective")
            for j, kind in enumerate(flt.kinds or []):
                _known(f"{field}.targets.kinds[{j}]", "objective kind", kind, self.w.kinds)
            if decl.text is not None:
                _template(f"{field}.text", decl.text, self.stakes | ACTION_VARS)
            _template(f"{field}.verb", decl.verb, {"target"})
            self._effects(f"{field}.effects", decl.effects, context="action", target=decl.target, reach=decl.reach)

    def _effects(self, field: str, effects: list[Effect], *, context: str, target: TargetKind, reach: Reach) -> None:
        spec = self.spec
        allowed = {
            "action": None,
            "transition": (
                Harm,
                Heal,
                StatChange,
                TrustChange,
                ClockChange,
                PoolChange,
                TallyChange,
                Bump,
                Chance,
                End,
            ),
            "threshold": (Harm, Heal, StatChange, ClockChange, PoolChange, End),
        }[context]
        from amphoreus_graph.worlds.kit import schema

        for i, effect in enumerate(effects):
            key = next(iter(type(effect).model_fields))
            here = f"{field}[{i}].{key}"
            if allowed is not None and not isinstance(effect, allowed):
                names = sorted(k for k, cls in schema.EFFECTS.items() if issubclass(cls, allowed))
                raise Problem(f"{field}[{i}]", f"{key!r} cannot happen in a {context}; expected one of {names}")
            agent_needed = f"{here}: needs an agent target; expected the action's target: agent"

            def need(kind: TargetKind, why: str, here: str = here) -> None:
                if target is not kind:
                    raise Problem(here, f"{why}; expected the action to have target: {kind.value}")

            if isinstance(effect, Move):
                if effect.move.to is not None:
                    _known(f"{here}.to", "location", effect.move.to, self.w.locations)
                else:
                    need(TargetKind.LOCATION, "moves to the action's target")
                    if reach is Reach.HERE:
                        raise Problem(
                            f"{field}[{i}]", "a move with reach: here goes nowhere; expected reach: edge or anywhere"
                        )
            elif isinstance(effect, Claim | Deliver | Douse | Lose):
                args = getattr(effect, key)
                if args.objective is not None:
                    _known(f"{here}.objective", "objective", args.objective, self.w.objectives)
                elif not isinstance(effect, Deliver):
                    need(TargetKind.OBJECTIVE, f"{key} acts on the action's target")
                if not self.w.objectives:
                    raise Problem(here, "the world has no objectives; expected objectives: first")
            elif isinstance(effect, Take):
                need(TargetKind.AGENT, "takes from the action's target")
            elif isinstance(effect, Harm | Heal | StatChange):
                args = getattr(effect, key)
                stat = args.name if isinstance(effect, StatChange) else args.stat
                if stat is None and spec.stats and self.w.vital is None:
                    raise Problem(f"{here}.stat", "no vital stat to default to; expected a stat name")
                if stat is None and not spec.stats:
                    raise Problem(here, "the world has no stats; expected stats: first")
                if stat is not None:
                    _known(f"{here}.{'name' if isinstance(effect, StatChange) else 'stat'}", "stat", stat, spec.stats)
                if context == "threshold" and args.who is not Who.ALL:
                    raise Problem(f"{here}.who", f"{args.who.value!r}; a threshold has no actor, expected who: all")
                if args.who is Who.TARGET and context == "action" and target is not TargetKind.AGENT:
                    raise Problem(f"{here}.who", agent_needed)
            elif isinstance(effect, Shield):
                if effect.shield.who == "target" and target is not TargetKind.AGENT:
                    raise Problem(f"{here}.who", agent_needed)
            elif isinstance(effect, TrustChange):
                t = effect.trust
                if (t.target or t.actor or t.mutual) and context == "action" and target is not TargetKind.AGENT:
                    raise Problem(here, "target/actor/mutual trust need a target agent; expected target: agent")
                if t.mutual is not None and context != "action":
                    raise Problem(f"{here}.mutual", f"mutual offers need a decision; not in a {context}")
            elif isinstance(effect, ClockChange):
                if spec.clock is None:
                    raise Problem(here, "the world has no clock; expected a clock: section first")
            elif isinstance(effect, PoolChange):
                _known(f"{here}.name", "pool", effect.pool.name, spec.pools)
            elif isinstance(effect, Harvest):
                _known(f"{here}.pool", "pool", effect.harvest.pool, spec.pools)
                if effect.harvest.into is not None:
                    _known(f"{here}.into", "stat", effect.harvest.into, spec.stats)
            elif isinstance(effect, End):
                self._ending_ref(f"{here}.outcome", effect.end.outcome)
            elif isinstance(effect, Chance):
                args = effect.chance
                if args.stat is not None:
                    _known(f"{here}.stat", "stat", args.stat, spec.stats)
                for key2 in ("text", "else_text"):
                    text = getattr(args, key2)
                    if text is not None:
                        _template(f"{here}.{key2}", text, self.stakes | ACTION_VARS)
                self._effects(f"{here}.then", args.then, context=context, target=target, reach=reach)
                self._effects(f"{here}.otherwise", args.otherwise, context=context, target=target, reach=reach)

    def _agents(self) -> None:
        names = [a.name for a in self.spec.agents]
        for i, agent in enumerate(self.spec.agents):
            field = f"agents[{i}]"
            _known(f"{field}.start", "location", agent.start, self.w.locations)
            for other in agent.relationships:
                _known(f"{field}.relationships.{other}", "agent", other, [n for n in names if n != agent.name])
            for stat, value in agent.stats.items():
                _known(f"{field}.stats.{stat}", "stat", stat, self.spec.stats)
                declared = self.spec.stats[stat]
                if not declared.min <= value <= declared.max:
                    raise Problem(
                        f"{field}.stats.{stat}",
                        f"{num(value)} is outside [{num(declared.min)}, {num(declared.max)}]; expected a value in it",
                    )
            if agent.seeks is not None:
                _known(f"{field}.seeks", "objective", agent.seeks, self.w.objectives)

    def _endings(self) -> None:
        for i, ending in enumerate(self.spec.endings):
            field = f"endings[{i}]"
            _template(f"{field}.text", ending.text, self.stakes | {"outcome"})
            cond = ending.when
            if cond is not None:
                if cond.objectives is not None:
                    for j, name in enumerate(cond.objectives.which or []):
                        _known(f"{field}.when.objectives.which[{j}]", "objective", name, self.w.objectives)
                    count = len(cond.objectives.which or self.w.objectives)
                    if not count:
                        raise Problem(f"{field}.when.objectives", "the world has no objectives; expected some first")
                    if cond.objectives.at_least is not None and cond.objectives.at_least > count:
                        raise Problem(
                            f"{field}.when.objectives.at_least",
                            f"{cond.objectives.at_least} of {count}; expected at most {count}",
                        )
                if cond.clock is not None:
                    if self.spec.clock is None:
                        raise Problem(f"{field}.when.clock", "the world has no clock; expected a clock: section first")
                    self._range(f"{field}.when.clock", cond.clock)
                for pool, r in cond.pool.items():
                    _known(f"{field}.when.pool.{pool}", "pool", pool, self.spec.pools)
                    self._range(f"{field}.when.pool.{pool}", r)
                if cond.all_fallen and self.w.vital is None:
                    raise Problem(f"{field}.when.all_fallen", "nobody can fall; expected a stat with vital: true")
            if ending.score is not None:
                self._score(f"{field}.score", ending.score)
        self._score("score", self.spec.score)

    def _score(self, field: str, score: ScoreSpec) -> None:
        for pool in score.pools:
            _known(f"{field}.pools.{pool}", "pool", pool, self.spec.pools)
        if score.clock and self.spec.clock is None:
            raise Problem(f"{field}.clock", "the world has no clock; expected a clock: section first")
        _ = [Status(s) for s in score.objectives]


def check(world: Compiled) -> None:
    """Raise Problem for the first cross-reference the spec gets wrong."""
    _Checker(world).run()
