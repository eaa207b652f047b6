"""Cross-references a kit world's YAML must get right once its shapes are valid: names it mentions exist,
numbers lie in their declared ranges, templates use placeholders the kit fills, effects fit their action.

`check(spec)` raises `Problem(field path, what was expected)` for the first one found; the loader turns it into
one ScenarioError line.
"""

from __future__ import annotations

from collections.abc import Iterable

from amphoreus_graph.catalogs.names import AMBIGUOUS, ambiguous, name_problem, shown
from amphoreus_graph.contracts.actions import TAGS, Reach, TargetKind
from amphoreus_graph.worlds.kit import social_checks
from amphoreus_graph.worlds.kit.compiled import (
    ACTION_VARS,
    AIM_VARS,
    CLOCK,
    STAKES_VARS,
    TRANSITION_VARS,
    Compiled,
)
from amphoreus_graph.worlds.kit.effects import (
    ACTION,
    AGENT,
    EFFECTS,
    PAIR,
    THRESHOLD,
    TRANSITION,
    WORLD,
    Effect,
    EffectCheck,
)
from amphoreus_graph.worlds.kit.expr import Expr, ExprError
from amphoreus_graph.worlds.kit.problems import Problem, known, one_of
from amphoreus_graph.worlds.kit.schema import Condition, Range, ScoreSpec, Threshold
from amphoreus_graph.worlds.kit.scope import TRUST, names_of
from amphoreus_graph.worlds.kit.terms import Status
from amphoreus_graph.worlds.kit.texts import check_template, num

RESERVED_ENDINGS = ("round_limit", "all_fallen")
# The agents each place of use binds for its expressions and effects (an action adds its target agent).
ROLES: dict[str, tuple[str, ...]] = {
    ACTION: ("actor",),
    TRANSITION: ("actor",),
    THRESHOLD: (),
    WORLD: (),
    AGENT: ("actor",),
    PAIR: ("actor", "target"),
}


def _unique(field: str, kind: str, names: list[str]) -> None:
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise Problem(field, f"duplicate {kind} names {dupes}; expected unique names")


def _within(field: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise Problem(field, f"{num(value)} is outside [{num(low)}, {num(high)}]; expected a value in it")


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
        social_checks.check_sections(self)
        self._objectives()
        self._actions()
        self._agents()
        self._endings()
        self._society()
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
        """Pools, clocks and stats name template placeholders and gauges: they must not collide with the kit's
        own, nor with each other; a relation must not be called like the kit's trust."""
        taken = set(STAKES_VARS) | {s.value for s in Status} | {CLOCK}
        for section, names in (("pools", list(self.spec.pools)), ("clocks", list(self.spec.clocks))):
            for name in names:
                if name in taken or name in self.spec.stats:
                    others = sorted(taken | set(self.spec.stats))
                    raise Problem(
                        f"{section}.{name}", f"the name {name!r} is taken; expected a name other than {others}"
                    )
                taken.add(name)
        if TRUST in self.spec.relations:
            raise Problem(f"relations.{TRUST}", "trust is every world's own relation; expected another name")
        if len([s for s in self.spec.stats.values() if s.vital]) > 1:
            raise Problem("stats", "more than one vital stat; expected at most one (the one whose min fells an agent)")
        for tag in self.spec.tags:
            if tag in TAGS:
                raise Problem(f"tags.{tag}", f"{tag!r} is a default tag already; expected new tags only")

    def _pair(self, field: str, pair: list[str]) -> None:
        if len(pair) != 2:
            raise Problem(field, f"{pair!r}; expected a pair [from, to]")
        for j, loc in enumerate(pair):
            known(f"{field}[{j}]", "location", loc, self.w.locations)
        if pair[0] == pair[1]:
            raise Problem(field, f"{pair!r} joins a place to itself; expected two different locations")
        if not self.w.complete and (pair[0], pair[1]) not in self.w.edges and (pair[1], pair[0]) not in self.w.edges:
            raise Problem(field, f"no edge between {pair[0]!r} and {pair[1]!r}; expected a declared edge")

    def _map(self) -> None:
        seen: set[tuple[str, str]] = set()
        for i, edge in enumerate(self.spec.edges):
            a, b = edge.between
            for j, loc in enumerate(edge.between):
                known(f"edges[{i}].between[{j}]", "location", loc, self.w.locations)
            if a == b:
                raise Problem(f"edges[{i}].between", f"{edge.between!r} joins a place to itself; expected two places")
            pairs = {(a, b)} if edge.one_way else {(a, b), (b, a)}
            if pairs & seen:
                raise Problem(f"edges[{i}]", f"a second edge from {a!r} to {b!r}; expected one edge per way")
            seen |= pairs
        for i, place in enumerate(self.spec.locations):
            for j, action in enumerate(place.actions or []):
                known(f"locations[{i}].actions[{j}]", "action", action, self.w.actions)
            for j, text in enumerate(place.situations):
                _template(f"locations[{i}].situations[{j}]", text, self.stakes | {"location"})

    def _numbers(self) -> None:
        spec = self.spec
        clock = spec.clock
        if clock is not None:
            for key in clock.on_action:
                known(f"clock.on_action.{key}", "action", key, self.w.actions)
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
                known(f"{field}.costs.{action}", "action", action, self.w.actions)
            for stat, amount in costs.items():
                known(f"{field}.costs.{action}.{stat}", "stat", stat, self.spec.stats)
                if amount < 0:
                    raise Problem(f"{field}.costs.{action}.{stat}", f"{num(amount)}; expected an extra cost ≥ 0")
        for j, action in enumerate(t.forbid):
            known(f"{field}.forbid[{j}]", "action", action, self.w.actions)
        if t.end is not None:
            self._ending_ref(f"{field}.end", t.end)
        _template(f"{field}.text", t.text, self.stakes)
        self._effects(f"{field}.effects", t.effects, context="threshold", target=TargetKind.NONE, reach=Reach.ANYWHERE)

    def _ending_ref(self, field: str, outcome: str) -> None:
        known(field, "ending", outcome, [*self.w.endings, *RESERVED_ENDINGS])

    def _objectives(self) -> None:
        spec = self.spec
        for key, kind in self.w.kinds.items():
            field = f"objective_kinds.{key}"
            for attr in ("chance_stat", "contest_stat"):
                stat = getattr(kind, attr)
                if stat is not None:
                    known(f"{field}.{attr}", "stat", stat, spec.stats)
            for j, loc in enumerate(kind.deliver_to):
                known(f"{field}.deliver_to[{j}]", "location", loc, self.w.locations)
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
                known(f"objectives[{i}].kind", "objective kind", obj.kind, self.w.kinds)
            known(f"objectives[{i}].location", "location", obj.location, self.w.locations)

    def _expr(self, field: str, text: str, roles: tuple[str, ...], *, place: bool = False) -> None:
        try:
            Expr.parse(text).check(names_of(self.spec, roles, place=place))
        except ExprError as error:
            raise Problem(field, str(error)) from None

    def _condition(
        self, field: str, cond: Condition | None, roles: tuple[str, ...] = ("actor",), *, place: bool = False
    ) -> None:
        if cond is None:
            return
        if cond.test is not None:
            self._expr(f"{field}.test", cond.test, roles, place=place)
        for key, parts in (("all", cond.all_), ("any", cond.any_)):
            for j, part in enumerate(parts or []):
                self._condition(f"{field}.{key}[{j}]", part, roles, place=place)
        if cond.not_ is not None:
            self._condition(f"{field}.not", cond.not_, roles, place=place)
        agent_fields: dict[str, object] = {
            "holding": cond.holding is not None,
            "at": cond.at,
            "stat": cond.stat,
            "objective_here": cond.objective_here,
        }
        if "actor" not in roles and (used := [k for k, v in agent_fields.items() if v]):
            raise Problem(f"{field}.{used[0]}", "nobody acts here; expected a test of the world (test:, pool:, clock:)")
        for j, loc in enumerate(cond.at or []):
            known(f"{field}.at[{j}]", "location", loc, self.w.locations)
        for stat, r in cond.stat.items():
            known(f"{field}.stat.{stat}", "stat", stat, self.spec.stats)
            self._range(f"{field}.stat.{stat}", r)
        for pool, r in cond.pool.items():
            known(f"{field}.pool.{pool}", "pool", pool, self.spec.pools)
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
                    raise Problem(f"{field}.tags[{j}]", one_of("tag", tag, tags) + " (or declare it under tags:)")
            roles = ("actor", "target") if decl.target is TargetKind.AGENT else ("actor",)
            if decl.secret and decl.public:
                raise Problem(f"{field}.secret", "a secret action cannot be public; expected one of secret or public")
            self._condition(f"{field}.when", decl.when)
            if decl.targets.test is not None:
                if decl.target is not TargetKind.AGENT:
                    raise Problem(f"{field}.targets.test", "tests an agent target; expected target: agent")
                self._expr(f"{field}.targets.test", decl.targets.test, ("actor", "target"))
            for j, rule in enumerate(decl.pressure):
                self._condition(f"{field}.pressure[{j}].when", rule.when)
            for stat in decl.cost:
                known(f"{field}.cost.{stat}", "stat", stat, self.spec.stats)
            flt = decl.targets
            if (flt.self_ or flt.holding is not None) and decl.target is not TargetKind.AGENT:
                raise Problem(f"{field}.targets", "self/holding filter agent targets; expected target: agent")
            if (flt.status is not None or flt.kinds is not None) and decl.target is not TargetKind.OBJECTIVE:
                raise Problem(f"{field}.targets", "status/kinds filter objective targets; expected target: objective")
            for j, kind in enumerate(flt.kinds or []):
                known(f"{field}.targets.kinds[{j}]", "objective kind", kind, self.w.kinds)
            if decl.text is not None:
                _template(f"{field}.text", decl.text, self.stakes | ACTION_VARS)
            _template(f"{field}.verb", decl.verb, {"target"})
            self._effects(
                f"{field}.effects", decl.effects, context="action", target=decl.target, reach=decl.reach, roles=roles
            )

    def _effects(
        self,
        field: str,
        effects: list[Effect],
        *,
        context: str,
        target: TargetKind,
        reach: Reach,
        roles: tuple[str, ...] | None = None,
    ) -> None:
        roles = ROLES[context] if roles is None else roles
        for i, effect in enumerate(effects):
            here = f"{field}[{i}].{effect.key}"
            for name, text in effect.expressions().items():
                self._expr(f"{here}.{name}", text, roles)
            if context not in effect.places:
                names = sorted(k for k, cls in EFFECTS.items() if context in cls.places)
                raise Problem(f"{field}[{i}]", f"{effect.key!r} cannot happen in a {context}; expected one of {names}")
            effect.check(EffectCheck(self, here, context, target, reach, roles))

    def _agents(self) -> None:
        names = [a.name for a in self.spec.agents]
        for i, agent in enumerate(self.spec.agents):
            field = f"agents[{i}]"
            known(f"{field}.start", "location", agent.start, self.w.locations)
            for other in agent.relationships:
                known(f"{field}.relationships.{other}", "agent", other, [n for n in names if n != agent.name])
            for stat, value in agent.stats.items():
                known(f"{field}.stats.{stat}", "stat", stat, self.spec.stats)
                declared = self.spec.stats[stat]
                _within(f"{field}.stats.{stat}", value, declared.min, declared.max)
            if agent.seeks is not None:
                known(f"{field}.seeks", "objective", agent.seeks, self.w.objectives)

    def _endings(self) -> None:
        for i, ending in enumerate(self.spec.endings):
            field = f"endings[{i}]"
            _template(f"{field}.text", ending.text, self.stakes | {"outcome"})
            cond = ending.when
            if cond is not None:
                if cond.objectives is not None:
                    for j, name in enumerate(cond.objectives.which or []):
                        known(f"{field}.when.objectives.which[{j}]", "objective", name, self.w.objectives)
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
                    known(f"{field}.when.pool.{pool}", "pool", pool, self.spec.pools)
                    self._range(f"{field}.when.pool.{pool}", r)
                if cond.all_fallen and self.w.vital is None:
                    raise Problem(f"{field}.when.all_fallen", "nobody can fall; expected a stat with vital: true")
                if cond.test is not None:
                    self._expr(f"{field}.when.test", cond.test, ())
            if ending.score is not None:
                self._score(f"{field}.score", ending.score)
        self._score("score", self.spec.score)

    def _score(self, field: str, score: ScoreSpec) -> None:
        for pool in score.pools:
            known(f"{field}.pools.{pool}", "pool", pool, self.spec.pools)
        if score.clock and self.spec.clock is None:
            raise Problem(f"{field}.clock", "the world has no clock; expected a clock: section first")
        _ = [Status(s) for s in score.objectives]
        if score.expr is not None:
            self._expr(f"{field}.expr", score.expr, ())
        if score.per_agent is not None:
            self._expr(f"{field}.per_agent", score.per_agent, ("actor",))

    def _society(self) -> None:
        """Relations, named clocks, per-round rules, triggers and the director's events."""
        spec = self.spec
        for name, clock in spec.clocks.items():
            for i, t in enumerate(clock.thresholds):
                self._threshold(f"clocks.{name}.thresholds[{i}]", t, clock.min, clock.max)
            if clock.on_action or clock.on_transition:
                raise Problem(f"clocks.{name}", "on_action/on_transition belong to clock:; expected a clock effect")
            if isinstance(clock.rise_per_round, str):
                self._expr(f"clocks.{name}.rise_per_round", clock.rise_per_round, ())
        if spec.clock is not None and isinstance(spec.clock.rise_per_round, str):
            self._expr("clock.rise_per_round", spec.clock.rise_per_round, ())
        names = [a.name for a in spec.agents]
        for i, agent in enumerate(spec.agents):
            for relation, row in agent.relations.items():
                known(f"agents[{i}].relations.{relation}", "relation", relation, spec.relations)
                declared = spec.relations[relation]
                for other, value in row.items():
                    here = f"agents[{i}].relations.{relation}.{other}"
                    known(here, "agent", other, [n for n in names if n != agent.name])
                    _within(here, value, declared.min, declared.max)
        for i, rule in enumerate(spec.every_round):
            field = f"every_round[{i}]"
            if rule.relation is not None:
                known(f"{field}.relation", "relation", rule.relation, [*spec.relations, TRUST])
            context = "world" if rule.each == "world" else rule.each
            self._condition(f"{field}.when", rule.when, ROLES[context])
            self._effects(
                f"{field}.effects", rule.effects, context=context, target=TargetKind.NONE, reach=Reach.ANYWHERE
            )
            if rule.text is not None:
                _template(f"{field}.text", rule.text, self.stakes | {"actor", "target", "location"})
        ids = [t.id or f"trigger{i}" for i, t in enumerate(spec.triggers)]
        _unique("triggers", "trigger", ids)
        for i, trigger in enumerate(spec.triggers):
            field = f"triggers[{i}]"
            self._condition(f"{field}.when", trigger.when, ())
            self._effects(
                f"{field}.effects", trigger.effects, context="world", target=TargetKind.NONE, reach=Reach.ANYWHERE
            )
            _template(f"{field}.text", trigger.text, self.stakes)
            if trigger.end is not None:
                self._ending_ref(f"{field}.end", trigger.end)
        for i, draw in enumerate(spec.director):
            for j, event in enumerate(draw.events):
                field = f"director[{i}].events[{j}]"
                place = draw.per == "place"
                if event.at is not None and not place:
                    raise Problem(f"{field}.at", "places are for per: place draws; expected per: place, or no at:")
                for k, loc in enumerate(event.at or []):
                    known(f"{field}.at[{k}]", "location", loc, self.w.locations)
                self._condition(f"{field}.when", event.when, (), place=place)
                self._effects(
                    f"{field}.effects", event.effects, context="world", target=TargetKind.NONE, reach=Reach.ANYWHERE
                )
                _template(f"{field}.text", event.text, self.stakes | ({"location"} if place else set()))


def check(world: Compiled) -> None:
    """Raise Problem for the first cross-reference the spec gets wrong."""
    _Checker(world).run()
