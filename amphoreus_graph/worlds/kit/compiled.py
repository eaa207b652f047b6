"""A kit world's spec with its lookups built once, and the pure questions asked of it with a state: which
edges are open, what an action costs now, which targets an agent may choose, what a template says."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.contracts.turn import Option
from amphoreus_graph.worlds.kit import social
from amphoreus_graph.worlds.kit.effects import item_kind, walk
from amphoreus_graph.worlds.kit.expr import Expr
from amphoreus_graph.worlds.kit.schema import (
    ActionDecl,
    AgentDecl,
    Condition,
    Ending,
    KitSpec,
    Objective,
    ObjectiveKind,
    Threshold,
)
from amphoreus_graph.worlds.kit.scope import Scope
from amphoreus_graph.worlds.kit.sight import in_view, within_sight
from amphoreus_graph.worlds.kit.state import KitState
from amphoreus_graph.worlds.kit.terms import Status
from amphoreus_graph.worlds.kit.texts import names_in, num

if TYPE_CHECKING:
    from amphoreus_graph.worlds.kit.act import Act

Resolver = Callable[["Act"], None]

DEFAULT_KIND = "objective"
CLOCK = "clock"  # the gauge name of the world's clock in threshold ids; pools use their own names
# Placeholders every composed text may use (see docs/worlds-kit.md), besides one per status and per pool.
STAKES_VARS = frozenset({"round", "rounds", "clock", "clock_min", "clock_max", "total", "standing", "fallen", "tally"})
ACTION_VARS = frozenset(
    {"actor", "target", "location", "objective", "noun", "destination", "harm", "heal", "amount", "caught", "item"}
)
TRANSITION_VARS = frozenset({"actor", "target", "objective", "noun", "location", "winner", "rivals", "destination"})
AIM_VARS = frozenset({"objective", "noun", "location", "destination"})
MAX_IN_FORCE = 256  # sets of thresholds in force whose consequences are kept (a cycle passes through a handful)


@dataclass(frozen=True)
class ThresholdRef:
    id: str
    gauge: str  # CLOCK or a pool's name
    spec: Threshold


class Compiled:
    """The spec plus everything derived from it once: names in order, the directed edges, the thresholds."""

    def __init__(self, spec: KitSpec) -> None:
        self.spec = spec
        self.locations = [loc.name for loc in spec.locations]
        self.location = {loc.name: loc for loc in spec.locations}
        self.agents: dict[str, AgentDecl] = {a.name: a for a in spec.agents}
        self.order = {name: i for i, name in enumerate(self.agents)}  # an agent's place in the world's order
        self.actions: dict[str, ActionDecl] = {a.name: a for a in spec.actions}
        self.kinds: dict[str, ObjectiveKind] = dict(spec.objective_kinds) or {DEFAULT_KIND: ObjectiveKind()}
        self.objectives: dict[str, Objective] = {o.name: o for o in spec.objectives}
        only = next(iter(self.kinds)) if len(self.kinds) == 1 else None
        self.kind_of: dict[str, str] = {o.name: o.kind or only or "" for o in spec.objectives}
        self.carried = any(k in self.kinds and self.kinds[k].mode == "carried" for k in self.kind_of.values())
        self.endings: dict[str, Ending] = {e.id: e for e in spec.endings}
        self.vital = next((name for name, stat in spec.stats.items() if stat.vital), None)
        self.complete = not spec.edges  # no edges declared: every place is one round from every other
        self.edges: dict[tuple[str, str], tuple[int, bool]] = {}  # (from, to) -> (time, open at genesis)
        for edge in spec.edges:
            a, b = edge.between
            self.edges[(a, b)] = (edge.time, edge.open)
            if not edge.one_way:
                self.edges[(b, a)] = (edge.time, edge.open)
        self.thresholds: list[ThresholdRef] = []
        if spec.clock is not None:
            self.thresholds += [_ref(CLOCK, t) for t in spec.clock.thresholds]
        for name, pool in spec.pools.items():
            self.thresholds += [_ref(name, t) for t in pool.thresholds]
        for name, clock in spec.clocks.items():
            self.thresholds += [_ref(name, t) for t in clock.thresholds]
        self.resolvers: dict[str, Resolver] = {}
        self._exprs: dict[str, Expr] = {}
        self._in_force: dict[tuple[str, ...], _InForce] = {}

    # ---------------------------------------------------------------------------------------- expressions

    def expr(self, text: str) -> Expr:
        """An expression of the YAML, parsed once (its syntax and names were checked at load)."""
        found = self._exprs.get(text)
        if found is None:
            found = self._exprs[text] = Expr.parse(text)
        return found

    def amount(self, value: float | str, scope: Scope) -> float:
        """A declared number, or what its expression computes now."""
        return value if isinstance(value, float | int) else scope.number(self.expr(value))

    # ------------------------------------------------------------------------------------------ objectives

    def kind(self, objective: str) -> ObjectiveKind:
        return self.kinds[self.kind_of[objective]]

    def noun(self, objective: str) -> str:
        return self.kind(objective).noun or self.kind_of[objective].replace("_", " ")

    def word(self, objective: str, status: Status) -> str:
        """A state as the objective's kind says it (its `words`, else the state's own name)."""
        return self.kind(objective).words.get(status, status.value)

    def claimable(self, state: KitState, objective: str) -> bool:
        status = state.objectives[objective].status
        return status is Status.FREE or (status is Status.DOUSED and self.kind(objective).mode == "in_place")

    def deliverable(self, state: KitState, agent: str, objective: str) -> bool:
        """Held by the agent and where it belongs (anywhere, if its kind names no place)."""
        places = self.kind(objective).deliver_to
        return objective in state.held_by(agent) and (not places or state.agents[agent].at in places)

    # ----------------------------------------------------------------------------------------------- gauges

    def gauge(self, state: KitState, name: str) -> float:
        if name == CLOCK:
            return float(state.clock or 0.0)
        return state.clocks[name] if name in self.spec.clocks else state.pools[name]

    def gauge_range(self, name: str) -> tuple[float, float]:
        if name == CLOCK:
            assert self.spec.clock is not None
            return self.spec.clock.min, self.spec.clock.max
        gauge = self.spec.clocks[name] if name in self.spec.clocks else self.spec.pools[name]
        return gauge.min, gauge.max

    def gauge_label(self, name: str) -> str:
        """How a gauge is shown: its label; a named clock without one, by its name."""
        if name == CLOCK:
            assert self.spec.clock is not None
            return self.spec.clock.label
        if name in self.spec.clocks:
            clock = self.spec.clocks[name]
            return clock.label if "label" in clock.model_fields_set else name
        return self.spec.pools[name].label or name

    def in_force(self, state: KitState) -> list[ThresholdRef]:
        return list(self._now(state).refs)

    def _now(self, state: KitState) -> _InForce:
        """What the thresholds in force make of the map and the actions, worked out once per set of them: every
        agent of a round asks it of the same state, and a cycle passes through few such sets."""
        key = tuple(state.active)
        found = self._in_force.get(key)
        if found is None:
            if len(self._in_force) >= MAX_IN_FORCE:
                self._in_force.clear()
            active = set(key)
            found = self._in_force[key] = _InForce(self, [t for t in self.thresholds if t.id in active])
        return found

    def holding_now(self, state: KitState) -> list[str]:
        """Thresholds whose condition holds on the gauges' current values (sticky ones stay in force anyway)."""
        return [t.id for t in self.thresholds if t.spec.holds(self.gauge(state, t.gauge))]

    # -------------------------------------------------------------------------------------------------- map

    def open_edges(self, state: KitState) -> dict[tuple[str, str], int]:
        """Directed open edges with their travel time: declared open, opened by a threshold in force, and not
        closed by one (closing wins). With no edges declared, every pair of places is one round apart."""
        return dict(self._now(state).edges)

    def _open_edges(self, refs: list[ThresholdRef]) -> dict[tuple[str, str], int]:
        if self.complete:
            edges = {(a, b): (1, True) for a in self.locations for b in self.locations if a != b}
        else:
            edges = dict(self.edges)
        opened: set[tuple[str, str]] = set()
        closed: set[tuple[str, str]] = set()
        for ref in refs:
            opened |= {pair for a, b in ref.spec.open for pair in ((a, b), (b, a))}
            closed |= {pair for a, b in ref.spec.close for pair in ((a, b), (b, a))}
        return {
            pair: time for pair, (time, is_open) in edges.items() if (is_open or pair in opened) and pair not in closed
        }

    def neighbours(self, state: KitState, location: str | None) -> dict[str, int]:
        if location is None:
            return {}
        now = self._now(state)
        found = now.neighbours.get(location)
        if found is None:
            edges = now.edges
            found = now.neighbours[location] = {
                b: edges[(location, b)] for b in self.locations if (location, b) in edges
            }
        return dict(found)

    def route(self, state: KitState, start: str, goal: str) -> tuple[str, int] | None:
        """The first step and total time of the quickest open route (None: no route, or already there)."""
        if start == goal:
            return None
        now = self._now(state)
        if (start, goal) not in now.routes:
            now.routes[(start, goal)] = self._route(now.edges, start, goal)
        return now.routes[(start, goal)]

    def _route(self, edges: dict[tuple[str, str], int], start: str, goal: str) -> tuple[str, int] | None:
        order = {name: i for i, name in enumerate(self.locations)}
        queue: list[tuple[int, int, str, str]] = [
            (time, order[b], b, b) for (a, b), time in edges.items() if a == start
        ]
        heapq.heapify(queue)
        seen = {start}
        while queue:
            time, _, place, first = heapq.heappop(queue)
            if place in seen:
                continue
            if place == goal:
                return first, time
            seen.add(place)
            for (a, b), step in edges.items():
                if a == place and b not in seen:
                    heapq.heappush(queue, (time + step, order[b], b, first))
        return None

    def travel_time(self, state: KitState, start: str, goal: str, reach: Reach) -> int:
        """Rounds a move takes: the open edge's time (edge reach), else the quickest open route (1 if none)."""
        direct = self._now(state).edges.get((start, goal))
        if direct is not None and reach is Reach.EDGE:
            return direct
        found = self.route(state, start, goal)
        return found[1] if found else 1

    # ------------------------------------------------------------------------------------------ conditions

    def costs(self, state: KitState, action: str) -> dict[str, float]:
        """What an action costs now: its own cost plus what thresholds in force add."""
        now = self._now(state)
        found = now.costs.get(action)
        if found is None:
            total = dict(self.actions[action].cost)
            for ref in now.refs:
                for key in (action, "*"):
                    for stat, extra in ref.spec.costs.get(key, {}).items():
                        total[stat] = total.get(stat, 0.0) + extra
            found = now.costs[action] = {stat: amount for stat, amount in total.items() if amount}
        return dict(found)

    def forbidden(self, state: KitState) -> frozenset[str]:
        return self._now(state).forbidden

    def short_of(self, state: KitState, agent: str, action: str) -> dict[str, tuple[float, float]]:
        """Stats the agent cannot pay an action's cost from: stat -> (cost, what it can spend)."""
        short = {}
        for stat, amount in self.costs(state, action).items():
            spare = state.agents[agent].stats[stat] - self.spec.stats[stat].min
            if amount > spare + 1e-9:
                short[stat] = (amount, spare)
        return short

    def holds(
        self,
        state: KitState,
        agent: str | None,
        cond: Condition | None,
        *,
        target: str | None = None,
        place: str | None = None,
    ) -> bool:
        """Whether a condition holds for an agent (None: for the world, where the checker allowed only tests of
        the world), its target and a place, where those are bound."""
        if cond is None:
            return True
        scope = Scope(self.spec, state, actor=agent, target=target, place=place)
        return self._holds(scope, cond)

    def _holds(self, scope: Scope, cond: Condition) -> bool:
        if cond.test is not None and not scope.holds(self.expr(cond.test)):
            return False
        if cond.all_ is not None and not all(self._holds(scope, c) for c in cond.all_):
            return False
        if cond.any_ is not None and not any(self._holds(scope, c) for c in cond.any_):
            return False
        if cond.not_ is not None and self._holds(scope, cond.not_):
            return False
        state, agent = scope.state, scope.roles["actor"]
        world = (
            cond.clock is None or cond.clock.holds(float(state.clock or 0.0)),
            all(r.holds(state.pools[p]) for p, r in cond.pool.items()),
            cond.round is None or cond.round.holds(state.round),
        )
        if agent is None or not all(world):
            return all(world)
        me = state.agents[agent]
        checks = [
            cond.holding is None or bool(state.held_by(agent)) == cond.holding,
            cond.at is None or me.at in cond.at,
            all(r.holds(me.stats[s]) for s, r in cond.stat.items()),
            cond.objective_here is None
            or any(o.at == me.at and o.status in cond.objective_here for o in state.objectives.values()),
        ]
        return all(checks)

    # ---------------------------------------------------------------------------------------------- options

    def targets(self, state: KitState, agent: str, decl: ActionDecl) -> list[str]:
        """The valid targets of an action for an agent now, in the world's order."""
        me = state.agents[agent]
        here = me.at
        effects = list(walk(decl.effects))
        flt = decl.targets
        if decl.target is TargetKind.AGENT:
            if decl.reach is Reach.HERE:
                pool = in_view(state, agent, here, self.spec.sight)
            elif decl.reach is Reach.EDGE:
                near = set(self.neighbours(state, here))
                edge = lambda: [n for n in state.standing() if state.agents[n].at in near]  # noqa: E731
                pool = within_sight(state, agent, f"beside {here}", edge, self.spec.sight)
            else:
                anywhere = lambda: [n for n in state.standing() if not state.agents[n].en_route]  # noqa: E731
                pool = within_sight(state, agent, "anywhere", anywhere, self.spec.sight)
            wanted = next((e.wants_holding for e in effects if e.wants_holding is not None), None)
            holding = flt.holding if flt.holding is not None else wanted
            carrying = state.carried()
            found = [
                n for n in pool if (n != agent or flt.self_) and (holding is None or (n in carrying) == holding)
            ] + ([agent] if flt.self_ and agent not in pool else [])
            if flt.test is None:
                return found
            test = self.expr(flt.test)
            return [n for n in found if Scope(self.spec, state, actor=agent, target=n).holds(test)]
        if decl.target is TargetKind.LOCATION:
            if decl.reach is Reach.EDGE:
                return list(self.neighbours(state, here))
            if decl.reach is Reach.HERE:
                return [here] if here else []
            return [loc for loc in self.locations if loc != here]
        if decl.target is TargetKind.ITEM:
            kind = item_kind(decl.effects)
            return social.item_targets(kind, self.spec, state, agent) if kind else []
        if decl.target is TargetKind.OBJECTIVE:
            near = set(self.neighbours(state, here)) if decl.reach is Reach.EDGE else set()
            found = []
            for name, obj in state.objectives.items():
                mine = obj.status is Status.HELD and obj.by == agent
                if decl.reach is Reach.HERE and not (obj.at == here or mine):
                    continue
                if decl.reach is Reach.EDGE and obj.at not in near:
                    continue
                if flt.kinds is not None and self.kind_of[name] not in flt.kinds:
                    continue
                if flt.status is not None:
                    fits = obj.status in flt.status
                else:
                    said = (e.fits(self, state, agent, name) for e in effects)
                    fits = next((f for f in said if f is not None), obj.status is not Status.LOST)
                if fits:
                    found.append(name)
            return found
        return []

    def offered(self, state: KitState, agent: str, decl: ActionDecl) -> tuple[bool, list[str]]:
        """Whether an action is offered to the agent now, and its targets."""
        if not self.available(state, agent, decl):
            return False, []
        if decl.target in (TargetKind.NONE, TargetKind.TEXT):
            return True, []
        targets = self.targets(state, agent, decl)
        return bool(targets), targets

    def available(self, state: KitState, agent: str, decl: ActionDecl) -> bool:
        """Whether an action may be taken now, whatever it is aimed at: not forbidden, its conditions hold, the
        agent can pay for it, and what its effects need is there (something to deliver, fish in the pool)."""
        me = state.agents[agent]
        if me.fallen or me.en_route or decl.name in self.forbidden(state):
            return False
        if not self.holds(state, agent, decl.when) or self.short_of(state, agent, decl.name):
            return False
        allowed = self.location[me.at].actions if me.at is not None else None
        if allowed is not None and decl.name not in allowed:
            return False
        return not any(effect.blocks(self, state, agent, decl) for effect in decl.effects)

    def offers_anything(self, state: KitState, agent: str) -> bool:
        """Whether `options` would offer the agent anything (stops at the first action it offers)."""
        return any(self.offered(state, agent, decl)[0] for decl in self.spec.actions)

    def options(self, state: KitState, agent: str) -> list[Option]:
        found = []
        for decl in self.spec.actions:
            ok, targets = self.offered(state, agent, decl)
            if ok:
                brief = self.brief(decl)
                found.append(Option(action=decl.name, targets=targets, **brief))
        return found

    @staticmethod
    def brief(decl: ActionDecl) -> dict[str, Any]:
        return {
            "help": decl.help,
            "target": decl.target,
            "tags": list(decl.tags),
            "verb": decl.verb,
            "affinity": dict(decl.affinity),
        }

    # -------------------------------------------------------------------------------------------- templates

    def stakes_vars(self, state: KitState, template: str | None = None) -> dict[str, Any]:
        """The values every composed text may use. For one `template`, the counts over the whole society
        (standing, fallen, tally) only if it names them, else 0: a round composes a text for each of its deeds."""
        clock = self.spec.clock
        names = None if template is None else names_in(template)
        counted = names is None or not names.isdisjoint(("standing", "fallen"))
        standing = len(state.standing()) if counted else 0
        values: dict[str, Any] = {
            "round": state.round,
            "rounds": state.limit or self.spec.rounds_per_cycle,
            "clock": state.clock if state.clock is not None else 0,
            "clock_min": clock.min if clock else 0,
            "clock_max": clock.max if clock else 0,
            "total": len(self.objectives),
            "standing": standing,
            "fallen": len(state.agents) - standing if counted else 0,
            "tally": sum(a.tally for a in state.agents.values()) if names is None or "tally" in names else 0,
        }
        for status in Status:
            values[status.value] = sum(1 for o in state.objectives.values() if o.status is status)
        for name, pool in self.spec.pools.items():
            values[name] = state.pools[name]
            values[f"{name}_max"] = pool.max
        for name, named in self.spec.clocks.items():
            values[name] = state.clocks[name]
            values[f"{name}_max"] = named.max
        return values

    def stakes_names(self) -> set[str]:
        gauges = [*self.spec.pools, *self.spec.clocks]
        return set(STAKES_VARS) | {s.value for s in Status} | set(gauges) | {f"{g}_max" for g in gauges}


class _InForce:
    """One set of thresholds in force and what follows from it: the open edges, what is forbidden, and (filled as
    they are asked) each place's neighbours, the quickest routes and the actions' costs."""

    def __init__(self, world: Compiled, refs: list[ThresholdRef]) -> None:
        self.refs = refs
        self.edges = world._open_edges(refs)
        self.forbidden = frozenset(name for ref in refs for name in ref.spec.forbid)
        self.neighbours: dict[str, dict[str, int]] = {}
        self.routes: dict[tuple[str, str], tuple[str, int] | None] = {}
        self.costs: dict[str, dict[str, float]] = {}


def _ref(gauge: str, threshold: Threshold) -> ThresholdRef:
    return ThresholdRef(
        id=f"{gauge}{'>=' if threshold.direction == 'up' else '<='}{num(threshold.at)}", gauge=gauge, spec=threshold
    )
