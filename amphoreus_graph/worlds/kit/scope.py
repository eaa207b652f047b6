"""What a kit world's expressions read: one state, seen from where the expression is used (an actor, its
target, a place), and what the world lets them name, for checking them when the world loads."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from amphoreus_graph.worlds.kit.expr import Expr, ExprError, Names
from amphoreus_graph.worlds.kit.schema import KitSpec
from amphoreus_graph.worlds.kit.state import KitState
from amphoreus_graph.worlds.kit.terms import Status

TRUST = "trust"  # the relation every world has: how far one agent trusts another
HERE_COUNTS = frozenset({"agents", *(s.value for s in Status)})  # here.agents, here.lit…


def names_of(spec: KitSpec, roles: Sequence[str] = (), *, place: bool = False) -> Names:
    """What an expression may name in this world, at a place of use that binds `roles` (and a place)."""
    return Names(
        stats=frozenset(spec.stats),
        pools=frozenset(spec.pools),
        clocks=frozenset(spec.clocks) | ({""} if spec.clock is not None else set()),
        relations=frozenset(spec.relations) | {TRUST},
        statuses=frozenset(s.value for s in Status),
        here=HERE_COUNTS if place else frozenset(),
        roles=frozenset(roles),
        topics=frozenset(spec.feed.topics if spec.feed else ()),
        agents=frozenset(a.name for a in spec.agents),
    )


class Scope:
    """An `expr.Env` over one state. Roles not bound where the expression is used were refused when the world
    loaded, so asking for one here is a bug, not a user's mistake."""

    def __init__(
        self,
        spec: KitSpec,
        state: KitState,
        *,
        actor: str | None = None,
        target: str | None = None,
        place: str | None = None,
    ) -> None:
        self.spec = spec
        self.state = state
        self.roles = {"actor": actor, "target": target}
        self.place = place

    def number(self, expr: Expr) -> float:
        return expr.number(self)

    def holds(self, expr: Expr) -> bool:
        return expr.holds(self)

    def scalar(self, name: str) -> float:
        if name == "round":
            return float(self.state.round)
        if name == "rounds":
            return float(self.state.limit or self.spec.rounds_per_cycle)
        standing = len(self.standing())
        return float(standing if name == "standing" else len(self.state.agents) - standing)

    def agent(self, role: str) -> str:
        name = self.roles.get(role)
        if name is None:
            raise ExprError(f"no {role} is bound here")
        return name

    @cached_property
    def _standing(self) -> list[str]:
        return self.state.standing()

    def standing(self) -> Sequence[str]:
        return self._standing

    def field(self, agent: str, name: str) -> float:
        me = self.state.agents[agent]
        if name == "tally":
            return me.tally
        if name == "holding":
            return float(len(self.state.held_by(agent)))
        return me.stats[name]

    def pool(self, name: str) -> float:
        return self.state.pools[name]

    def clock(self, name: str) -> float:
        return float(self.state.clock or 0.0) if name == "" else self.state.clocks[name]

    def relation(self, name: str, holder: str, other: str) -> float:
        if name == TRUST:
            return self.state.trust_of(holder, other)
        return self.state.relation_of(name, holder, other)

    def objectives(self, status: str) -> float:
        return float(sum(1 for o in self.state.objectives.values() if o.status.value == status))

    def reach(self, topic: str) -> float:
        return float(len(self.state.reached.get(topic, [])))

    def posts(self, topic: str) -> float:
        return float(sum(1 for p in self.state.posts if p.topic == topic))

    def here(self, name: str) -> float:
        if name == "agents":
            return float(len(self.state.present(self.place)))
        return float(sum(1 for o in self.state.objectives.values() if o.at == self.place and o.status.value == name))
